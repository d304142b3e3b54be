/*
 * job_conns.c: RLT_CONNS without blocking (take a slot now, or join the waiting list), and the
 * calls that are only charged and then let through (connect: its slot, then its RLT_CONNS place).
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
#include "internal.h"

#define ADD(field, v) atomic_fetch_add_explicit(&(field), (v), memory_order_relaxed)

/* 0: taken in every rule of mask; 1: wait (a delay rule is full); -errno: rejected. */
static int conns_try(struct rlt_sup *s, struct rlt_sup_job *j)
{
	struct rlt__ruleset *rs = s->rs;
	uint32_t taken = 0;

	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
		if (!(j->nmask & (1u << i)))
			continue;
		if (rlt__conns_take(r)) {
			taken |= 1u << i;
			continue;
		}
		if (taken)
			rlt_sup_conns_release(s, taken);
		int expired = j->conns_waiting && r->rule.max_wait_ns != RLT_NS_NEVER &&
		              rlt__now() - j->conns_since >= r->rule.max_wait_ns;
		if (r->rule.action == RLT_ACTION_REJECT || expired) {
			if (rs->stats_on) {
				ADD(r->st->calls, 1);
				ADD(r->st->rejected, 1);
			}
			return -r->rule.err;
		}
		if (!j->conns_waiting) {
			j->conns_since = rlt__now();
			j->conns_waiting = 1;
			j->waited = 1;
			j->wnext = s->conns_waiters;
			s->conns_waiters = j;
			if (r->rule.max_wait_ns != RLT_NS_NEVER) {
				j->deadline = j->conns_since + r->rule.max_wait_ns;
				rlt_sup_heap_push(&s->heap, j);
			}
		}
		return 1;
	}
	if (rs->stats_on) {
		uint64_t d = j->conns_waiting ? rlt__now() - j->conns_since : 0;
		for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
			struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
			if (!(j->nmask & (1u << i)))
				continue;
			ADD(r->st->calls, 1);
			ADD(r->st->allowed, 1);
			ADD(r->st->units, 1);
			if (d) {
				ADD(r->st->delayed, 1);
				ADD(r->st->delay_ns_total, d);
				rlt__stat_max(&r->st->delay_ns_max, d);
			}
		}
	}
	rlt_sup_conns_unwait(s, j);
	rlt_sup_heap_remove(&s->heap, j);
	return 0;
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

void rlt_sup_conns_release(struct rlt_sup *s, uint32_t mask)
{
	/* wakes waiters of other processes in shared scope; ours are retried by the loop, not
	 * from here: this runs inside other jobs' steps */
	rlt__conns_release(s->rs, mask);
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
		/* the socket holds the slots until its fd is closed */
		j->sock->conns_mask |= j->nmask;
		j->nmask = 0;
	}
	rlt_sup_job_end(s, j);
}
