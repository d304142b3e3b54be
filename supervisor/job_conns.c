/*
 * job_conns.c: RLT_CONNS without blocking (take a slot now, or join the waiting list), when
 * closes are looked for (the sweep of fd_facts.c: close is not notified), and the calls that
 * are only charged and then let through (connect: its slot, then its RLT_CONNS place).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conns.h"
#include "internal.h"

/*
 * A close is not notified (fd_facts.c): the sockets holding slots are swept for closed ones
 * when a call finds a rule full (before it waits or is refused), every SWEEP_WAIT_NS while a
 * connect or accept of the command waits for a slot, and every SWEEP_SHARED_NS while we hold
 * slots and a shared rule exists (a process outside the command may want one of them at any
 * moment, and a reject rule cannot wait for our next sweep: it sees our close within that; a
 * rule full now does not say so, as the slot it wants is the one that would make it full). A sweep costs one fstatat a socket
 * holding slots (some microseconds): each kind of sweep runs at most once per SHARE times the
 * last one's length, so that they take at most some 20%, 10% and 5% of a core however many
 * slots are held; with hundreds of slots held a close is then seen later than the periods say.
 */
#define SWEEP_URGENT_SHARE 4
#define SWEEP_WAIT_NS (10 * 1000000ull)
#define SWEEP_WAIT_SHARE 9
#define SWEEP_SHARED_NS (50 * 1000000ull)
#define SWEEP_SHARED_SHARE 19

/* An urgent sweep (a call must wait or be refused), unless the last one was too recent. */
static void conns_sweep(struct rlt_sup *s)
{
	if (!s->conns_held)
		return;
	if (s->sweep_end &&
	    rlt__now() < s->sweep_end + SWEEP_URGENT_SHARE * s->sweep_cost)
		return;
	rlt_sup_fd_sweep(s);
}

rlt_ns_t rlt_sup_conns_sweep_due(struct rlt_sup *s)
{
	rlt_ns_t gap;

	if (!s->conns_held)
		return 0;
	if (s->conns_waiters) {
		gap = SWEEP_WAIT_SHARE * s->sweep_cost;
		if (gap < SWEEP_WAIT_NS)
			gap = SWEEP_WAIT_NS;
	} else if (s->rs->conns_shared) {
		gap = SWEEP_SHARED_SHARE * s->sweep_cost;
		if (gap < SWEEP_SHARED_NS)
			gap = SWEEP_SHARED_NS;
	} else {
		return 0;
	}
	return s->sweep_end + gap;
}

void rlt_sup_conns_sweep_run(struct rlt_sup *s, rlt_ns_t now)
{
	rlt_ns_t due = rlt_sup_conns_sweep_due(s);

	if (due && now >= due)
		rlt_sup_fd_sweep(s);
}

/* The decision is the core's (rlt__conns_try); this keeps only the scheduling: a job that must
 * wait joins the waiting list (retried when a slot comes free) and, with a max-wait, the timer
 * heap. 0: taken in every rule of nmask; 1: wait; -errno: rejected. */
static int conns_try(struct rlt_sup *s, struct rlt_sup_job *j)
{
	/* closes first, then the decision: a slot the program gave back must not be missing */
	if (rlt__conns_full_peer(s->rs, &j->kpeer) & j->nmask)
		conns_sweep(s);
	int rc = rlt__conns_try_peer(s->rs, j->nmask, &j->kpeer, &j->conns_wait, rlt__now());

	if (rc != 1) {
		rlt_sup_conns_unwait(s, j);
		rlt_sup_heap_remove(&s->heap, j);
		return rc;
	}
	if (!j->conns_waiting) {
		j->conns_waiting = 1;
		j->waited = 1;
		j->wnext = s->conns_waiters;
		s->conns_waiters = j;
	}
	if (j->conns_wait.deadline != RLT_NS_NEVER) {
		/* again each time: the rule that is full, and so the deadline, may have changed */
		rlt_sup_heap_remove(&s->heap, j);
		j->deadline = j->conns_wait.deadline;
		rlt_sup_heap_push(&s->heap, j);
	}
	return 1;
}

/* The common tail of a charged call: its slot, then an RLT_CONNS place. 0 when both are had;
 * 1 when the job waits (on the timer heap or for a close) or was finished (rejected). */
int rlt_sup_slot_then_conns(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (rlt_sup_job_wait_slot(s, j, j->t.go))
		return 1;
	if (j->nmask && !j->conns_held) {
		int rc = conns_try(s, j);
		if (rc == 1)
			return 1;
		if (rc < 0) {
			rlt_sup_job_finish(s, j, rc);
			return 1;
		}
		j->conns_held = 1;
	}
	return 0;
}

void rlt_sup_conns_release(struct rlt_sup *s, uint32_t mask, const struct rlt__peer *peer)
{
	/* wakes waiters of other processes in shared scope; ours are retried by the loop, not
	 * from here: this runs inside other jobs' steps */
	rlt__conns_release_peer(s->rs, mask, peer);
	s->conns_dirty = 1;
}


/* OP_CONTINUE: charge, slot, (RLT_CONNS), CONTINUE. */
void rlt_sup_step_continue(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (!j->charged && !j->paid && rlt_sup_job_prepaid_take(s, j))
		j->paid = 1; /* restarted after its handler: it has paid and waited */
	if (!j->charged && !j->paid) {
		int rc = rlt_sup_job_charge(j, j->total, j->t.msgs ? j->t.msgs : 1);
		if (rc) {
			rlt_sup_log(s, RLT_LOG_DEBUG, j->proc->tgid, "system call %d on fd %d rejected",
			            j->nr, j->fd);
			rlt_sup_job_finish(s, j, rc);
			return;
		}
	}
	if (rlt_sup_slot_then_conns(s, j))
		return;
	if (rlt_sup_job_continue_paid(s, j, j->t.msgs))
		return;
	if (j->nmask) {
		/* the socket holds the slots until its fd is closed (or given back now, when it
		 * was found closed while the call waited) */
		rlt_sup_sock_take_conns(s, j->sock, j->nmask, &j->kpeer);
		j->nmask = 0;
	}
	rlt_sup_job_end(s, j);
}
