/*
 * job_table.c: a call that is not answered at once, and the table of them. A job is a small
 * state machine: it is charged, waits for its slot on the timer heap, waits for its socket (or
 * pipe) on epoll, makes the call for the program when the call must be shortened, and is
 * answered when it is done (see docs/DESIGN.md, "The supervisor in detail"). This file holds the jobs'
 * life (new, step, end), their waits (slot, socket, the periodic tick) and their charge; each
 * kind of call steps in a file of its own (job_*.c). Everything here runs under the
 * supervisor's lock, from the lane or the loop (notify_loop.c), and never makes a call that
 * can block.
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

#include "charge.h"
#include "clock.h"
#include "internal.h"
#include "policy.h"

static unsigned job_bucket(pid_t tid)
{
	return (unsigned)tid % RLT_SUP_JOB_BUCKETS;
}

struct rlt_sup_job *rlt_sup_job_of_tid(struct rlt_sup *s, pid_t tid)
{
	for (struct rlt_sup_job *j = s->jobs[job_bucket(tid)]; j; j = j->next)
		if (j->tid == tid)
			return j;
	return NULL;
}

static void job_unlink(struct rlt_sup *s, struct rlt_sup_job *j)
{
	struct rlt_sup_job **pp = &s->jobs[job_bucket(j->tid)];

	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (*pp)
		*pp = j->next;
}

void rlt_sup_conns_unwait(struct rlt_sup *s, struct rlt_sup_job *j)
{
	struct rlt_sup_job **pp = &s->conns_waiters;

	if (!j->conns_waiting)
		return;
	while (*pp && *pp != j)
		pp = &(*pp)->wnext;
	if (*pp)
		*pp = j->wnext;
	j->conns_waiting = 0;
}

void rlt_sup_job_unpark(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (j->park_fd < 0)
		return;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, j->park_fd, NULL);
	close(j->park_fd);
	j->park_fd = -1;
	if (j->phase == PH_READY)
		s->parked--;
}

/* Out of its wait for the slot: no longer among its rules' waiting threads (published). */
static void stop_waiting(struct rlt_sup_job *j)
{
	if (j->waiting_counted) {
		rlt__charge_waiting_end(j->proc->rs, &j->t, j->counted_waiting);
		j->waiting_counted = 0;
	}
}

/* Takes the job off every queue (heap, epoll, RLT_CONNS list, the waiting count). */
void rlt_sup_job_idle(struct rlt_sup *s, struct rlt_sup_job *j)
{
	stop_waiting(j);
	rlt_sup_heap_remove(&s->heap, j);
	rlt_sup_job_unpark(s, j);
	rlt_sup_conns_unwait(s, j);
}

/* The call is over (answered, or its thread will not come back): what it still holds goes
 * back (an unused charge, an RLT_CONNS slot, a connection nobody took). */
void rlt_sup_job_end(struct rlt_sup *s, struct rlt_sup_job *j)
{
	rlt_sup_job_idle(s, j);
	job_unlink(s, j);
	if (j->charged)
		rlt__settle(j->proc->rs, &j->t, 0, 0);
	if (j->conns_held && j->nmask)
		rlt_sup_conns_release(s, j->nmask, &j->kpeer);
	if (j->accepted >= 0)
		close(j->accepted);
	if (j->src_fd >= 0)
		close(j->src_fd);
	if (j->status_fd >= 0)
		close(j->status_fd);
	free(j->buf);
	free(j->iov);
	rlt_sup_sock_put(s, j->sock);
	rlt_sup_proc_put(s, j->proc);
	s->njobs--;
	/* Not freed yet: an epoll batch harvested before it was unparked may still name it
	 * (the lane can end a job while the loop is between epoll_wait and the lock). The loop
	 * frees the graveyard after its next batch, when no harvested event can be left. */
	j->phase = PH_GONE;
	j->buf = NULL;
	j->iov = NULL;
	j->next = s->graveyard;
	s->graveyard = j;
}

void rlt_sup_jobs_graveyard_free(struct rlt_sup *s)
{
	while (s->graveyard) {
		struct rlt_sup_job *j = s->graveyard;
		s->graveyard = j->next;
		free(j);
	}
}

/* What the kernel would write back and return for a call made for the program that moved
 * `moved` bytes (or failed with -errno): most calls return the count itself. */
static int64_t call_answer(struct rlt_sup_job *j, int64_t moved)
{
	if (moved < 0)
		return moved;
	if (j->nr == SYS_recvmmsg && j->op == OP_RECV) {
		/* one message of `moved` bytes (0 at the end of the stream) */
		unsigned len = (unsigned)moved;
		rlt_sup_mem_write(j->tid, j->args[1] + offsetof(struct mmsghdr, msg_len), &len, sizeof len);
		return 1;
	}
	if (j->op == OP_SENDFILE && j->off_addr && moved > 0) {
		/* sendfile with an offset: the kernel writes the new one back */
		int64_t off = j->src_off;
		rlt_sup_mem_write(j->tid, j->off_addr, &off, sizeof off);
	}
	return moved;
}

/* Answers the call (ENOENT: the thread died, nobody is left to answer) and ends it. */
void rlt_sup_job_finish(struct rlt_sup *s, struct rlt_sup_job *j, int64_t moved)
{
	int64_t answer = call_answer(j, moved);

	if (answer >= 0)
		rlt_sup_notif_return(s->notify_fd, j->id, answer);
	else
		rlt_sup_notif_error(s->notify_fd, j->id, (int)-answer);
	rlt_sup_job_end(s, j);
}

/* The socket's SO_RCVTIMEO (waits for input) or SO_SNDTIMEO (for room), in ns; 0: none. */
static rlt_ns_t sock_timeout(int fd, uint32_t events)
{
	struct timeval tv;
	socklen_t len = sizeof tv;

	if (getsockopt(fd, SOL_SOCKET, (events & EPOLLOUT) ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &len) !=
	    0)
		return 0;
	return (rlt_ns_t)tv.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)tv.tv_usec * 1000;
}

/*
 * A blocking call waits for its socket on epoll, and, when the program set a timeout on the
 * socket, on the timer heap too. As in the kernel the timeout covers the whole call from its
 * first wait on the socket (the wait for its slot before it is the throttle's, as under the
 * preload, where the kernel's clock starts when the real call is made).
 */
void rlt_sup_job_park_on(struct rlt_sup *s, struct rlt_sup_job *j, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events | EPOLLONESHOT,
	                         .data.ptr = RLT_SUP_JOB_TAG(j)};
	int op = EPOLL_CTL_MOD;

	if (j->park_fd >= 0 && j->park_src != fd)
		rlt_sup_job_unpark(s, j); /* it waited on its socket, now on its pipe, or the other way */
	if (j->park_fd < 0) {
		j->park_src = fd;
		j->park_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (j->park_fd < 0) {
			rlt_sup_job_finish(s, j, -ENOBUFS);
			return;
		}
		op = EPOLL_CTL_ADD;
	}
	if (epoll_ctl(s->epoll_fd, op, j->park_fd, &ev) != 0) {
		rlt_sup_job_finish(s, j, -ENOBUFS);
		return;
	}
	if (j->phase != PH_READY)
		j->parked_at = rlt__now();
	j->phase = PH_READY;
	j->park_events = events;
	s->parked++;
	if (!j->timeout_known) {
		rlt_ns_t t = sock_timeout(j->sock->dup, events);
		j->timeout_known = 1;
		j->timeout_at = t ? rlt__now() + t : 0;
	}
	if (j->timeout_at) {
		j->deadline = j->timeout_at;
		rlt_sup_heap_push(&s->heap, j); /* out of memory: it waits without its timeout */
	}
}

void rlt_sup_job_park(struct rlt_sup *s, struct rlt_sup_job *j, uint32_t events)
{
	rlt_sup_job_park_on(s, j, j->sock->dup, events);
}

/* Waits on the timer heap when the slot is still ahead. 1: waiting; 0: go now. */
int rlt_sup_job_wait_slot(struct rlt_sup *s, struct rlt_sup_job *j, rlt_ns_t at)
{
	if (at <= rlt__now())
		return 0;
	j->deadline = at;
	j->phase = PH_SLOT;
	j->waited = 1;
	if (!j->waiting_counted) {
		j->counted_waiting = rlt__charge_waiting_start(j->proc->rs, &j->t);
		j->waiting_counted = 1;
	}
	if (rlt_sup_heap_push(&s->heap, j) != 0) {
		rlt_sup_job_finish(s, j, -ENOMEM);
		return 1;
	}
	return 1;
}

int rlt_sup_job_charge(struct rlt_sup_job *j, uint64_t bytes, uint64_t msgs)
{
	if (rlt__charge_peer(j->proc->rs, &j->t, j->var, j->mask, j->sock->conn_block, &j->kpeer,
	                     bytes, msgs) != 0)
		return -j->t.err;
	j->charged = 1;
	j->charge_bytes = bytes;
	j->t.msgs = msgs;
	return 0;
}

void rlt_sup_job_settle(struct rlt_sup_job *j, uint64_t bytes, uint64_t msgs)
{
	if (!j->charged)
		return;
	rlt__settle(j->proc->rs, &j->t, bytes, msgs);
	j->charged = 0;
}

int rlt_sup_job_piece_charge(struct rlt_sup *s, struct rlt_sup_job *j)
{
	uint64_t piece;

	j->pace.peer = &j->kpeer; /* set here, once for every kind of paced job */
	piece = rlt__pace_piece(&j->pace, j->proc->rs, j->sock->conn_block, rlt__now());
	int rc = rlt_sup_job_buf(j, piece) != 0 ? -ENOMEM : 0;

	/* charged after: a receive that waits for data holding no reservation */
	if (!rc && !rlt__pace_charge_after(&j->pace))
		rc = rlt_sup_job_charge(j, piece, j->done == 0);
	if (rc) {
		rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : rc);
		return rc;
	}
	j->piece = piece;
	return 0;
}

void rlt_sup_job_charge_moved(struct rlt_sup_job *j, uint64_t n)
{
	if (rlt__pace_charge_after(&j->pace) && n > 0 &&
	    rlt_sup_job_charge(j, n, j->done == 0) != 0)
		j->t.go = 0; /* cannot be: these rules admit every charge */
	rlt_sup_job_settle(j, n, j->done == 0);
}

int rlt_sup_job_nonblocking(const struct rlt_sup_job *j)
{
	int fl = fcntl(j->sock->dup, F_GETFL);
	return (j->flags & MSG_DONTWAIT) || (fl >= 0 && (fl & O_NONBLOCK));
}


void rlt_sup_job_step(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (j->phase == PH_READY) {
		s->parked--;
		rlt_sup_heap_remove(&s->heap, j); /* its timeout, if it has one */
	}
	if (j->phase == PH_SLOT)
		stop_waiting(j);
	j->phase = PH_NEW;
	j->next_look = 0; /* out of its wait: looked at every tick again */
	switch (j->op) {
	case OP_CONTINUE: rlt_sup_step_continue(s, j); break;
	case OP_SEND:
	case OP_SENDFILE:
	case OP_RECV: rlt_sup_step_stream(s, j); break;
	case OP_DGRAM_RECV: rlt_sup_step_dgram_recv(s, j); break;
	case OP_SPLICE_SEND:
	case OP_SPLICE_RECV: rlt_sup_step_splice(s, j); break;
	case OP_ACCEPT: rlt_sup_step_accept(s, j); break;
	}
}


struct rlt_sup_job *rlt_sup_job_new(struct rlt_sup *s, const struct seccomp_notif *req,
                                    struct rlt_sup_proc *p, int fd, struct rlt_sup_sock *k,
                                    enum rlt_sup_op op, enum rlt_var var, uint32_t mask)
{
	struct rlt_sup_job *j = calloc(1, sizeof *j);

	if (!j)
		return NULL;
	j->id = req->id;
	j->tid = (pid_t)req->pid;
	j->nr = req->data.nr;
	memcpy(j->args, req->data.args, sizeof j->args);
	j->proc = p;
	p->jobs++;
	j->fd = fd;
	j->sock = rlt_sup_sock_hold(k);
	if (k) /* as the call found it (a connect's: the address it asked for) */
		j->kpeer = k->peer;
	j->op = op;
	j->var = var;
	j->mask = mask;
	j->park_fd = -1;
	j->accepted = -1;
	j->src_fd = -1;
	j->status_fd = -1;
	j->heap_i = SIZE_MAX;
	/* a new call is looked at from the next tick on */
	rlt_ns_t tick = rlt__now() + RLT_SUP_TICK_NS;
	if (!s->njobs || s->next_tick > tick)
		s->next_tick = tick;
	j->next = s->jobs[job_bucket(j->tid)];
	s->jobs[job_bucket(j->tid)] = j;
	s->njobs++;
	return j;
}

/* Reads the program's iovec into the job. 0 or -errno. */
int rlt_sup_job_iov(struct rlt_sup_job *j, uint64_t addr, uint64_t cnt)
{
	j->iov = calloc(cnt ? cnt : 1, sizeof *j->iov);
	if (!j->iov)
		return -ENOMEM;
	j->iovcnt = (unsigned)cnt;
	return rlt_sup_iov_read(j->tid, addr, cnt, j->iov, &j->total);
}

void rlt_sup_jobs_run_due(struct rlt_sup *s)
{
	rlt_ns_t now = rlt__now();
	struct rlt_sup_job *j;

	/* Bounded by the jobs due now: each leaves the heap before it is stepped. */
	while ((j = rlt_sup_heap_top(&s->heap)) && j->deadline <= now) {
		rlt_sup_heap_remove(&s->heap, j);
		if (j->phase == PH_READY) {
			/* SO_RCVTIMEO/SO_SNDTIMEO ran out: what moved, or EAGAIN, as the kernel says */
			rlt_sup_job_unpark(s, j);
			j->phase = PH_NEW;
			rlt_sup_job_settle(j, 0, 0);
			rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : -EAGAIN);
			continue;
		}
		if (j->conns_waiting) {
			/* max-wait for an RLT_CONNS slot is over: conns_try rejects it */
			if (j->op == OP_ACCEPT)
				rlt_sup_step_accept(s, j);
			else
				rlt_sup_step_continue(s, j);
			continue;
		}
		rlt_sup_job_step(s, j);
	}
}

void rlt_sup_jobs_retry_conns(struct rlt_sup *s)
{
	struct rlt_sup_job *list[64];
	unsigned n = 0;

	s->conns_dirty = 0;
	for (struct rlt_sup_job *j = s->conns_waiters; j && n < 64; j = j->wnext)
		list[n++] = j;
	/* oldest first: the list is pushed at the head */
	for (unsigned i = n; i-- > 0;) {
		struct rlt_sup_job *j = list[i];
		if (j->op == OP_ACCEPT)
			rlt_sup_step_accept(s, j);
		else
			rlt_sup_step_continue(s, j);
	}
	if (n == 64)
		s->conns_dirty = 1;
}

/* A call parked this long on a quiet socket is looked at every RLT_SUP_IDLE_LOOK_NS only: a
 * reading of /proc costs some 4 us, and a program may park hundreds of idle readers. */
#define RLT_SUP_IDLE_AFTER_NS (100 * 1000000ull)
#define RLT_SUP_IDLE_LOOK_NS (40 * 1000000ull)

/* At most some 2000 readings of /proc a second, however many calls wait: each waiting call is
 * read every njobs * RLT_SUP_LOOK_SHARE_NS (every tick while that is shorter than one), so the
 * supervisor's cost stays flat and a handler's latency grows with the number of waiters
 * (100 waiters: 50 ms; 400: 200 ms). */
#define RLT_SUP_LOOK_SHARE_NS (500 * 1000ull)

/* `rlthrottle set` for a call waiting for its slot: a request in its process's page (or a set
 * of a shared segment) is applied here as at the process's next charge, and the job's timer
 * moves to its ticket's new go time (rlt__ticket_refresh): a raised rate wakes it sooner, a
 * lowered one later. Every tick, whatever the job's next look at its signals. */
static void follow_set(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (j->phase != PH_SLOT || !j->charged || !j->proc || !j->proc->rs ||
	    !rlt__ticket_refresh(j->proc->rs, &j->t) || j->t.go == j->deadline)
		return;
	rlt_sup_heap_remove(&s->heap, j);
	j->deadline = j->t.go;
	if (rlt_sup_heap_push(&s->heap, j) != 0)
		rlt_sup_job_finish(s, j, -ENOMEM);
}

void rlt_sup_jobs_tick(struct rlt_sup *s)
{
	rlt_ns_t now = rlt__now(), next = now + RLT_SUP_IDLE_LOOK_NS;
	rlt_ns_t every = (rlt_ns_t)s->njobs * RLT_SUP_LOOK_SHARE_NS;

	/* Bounded by the jobs alive now; ending one does not end another. */
	for (unsigned b = 0; b < RLT_SUP_JOB_BUCKETS; b++) {
		struct rlt_sup_job *j = s->jobs[b];
		while (j) {
			struct rlt_sup_job *nj = j->next;
			follow_set(s, j);
			if ((j->phase == PH_SLOT || j->phase == PH_READY || j->conns_waiting) &&
			    now >= j->next_look) {
				enum rlt_sup_sig f = rlt_sup_signal_for(j);
				if (f == RLT_SIG_GONE && !rlt_sup_notif_valid(s->notify_fd, j->id))
					rlt_sup_job_end(s, j); /* its thread died with its call */
				else if (f == RLT_SIG_YES || (f == RLT_SIG_MAYBE && j->done))
					rlt_sup_job_interrupt(s, j);
				else if (j->phase == PH_READY &&
				         now - j->parked_at >= RLT_SUP_IDLE_AFTER_NS)
					/* on one grid: idle readers are read in the same tick */
					j->next_look = (now / RLT_SUP_IDLE_LOOK_NS + 1) *
					               RLT_SUP_IDLE_LOOK_NS;
				if (j->phase != PH_GONE && every > RLT_SUP_TICK_NS &&
				    j->next_look < now + every)
					j->next_look = now + every;
			}
			if (j->phase != PH_GONE && j->next_look < next)
				next = j->next_look;
			j = nj;
		}
	}
	/* no sooner than a tick, no later than the first job due: idle readers alone wake us
	 * every RLT_SUP_IDLE_LOOK_NS, not every tick */
	s->next_tick = next > now + RLT_SUP_TICK_NS ? next : now + RLT_SUP_TICK_NS;
}

void rlt_sup_jobs_sweep(struct rlt_sup *s)
{
	/* a waiting call whose thread died (the tick sees most of them first) */
	for (unsigned b = 0; b < RLT_SUP_JOB_BUCKETS; b++) {
		struct rlt_sup_job *j = s->jobs[b];
		while (j) {
			struct rlt_sup_job *next = j->next;
			if ((j->phase == PH_SLOT || j->phase == PH_READY || j->conns_waiting) &&
			    !rlt_sup_notif_valid(s->notify_fd, j->id))
				rlt_sup_job_end(s, j);
			j = next;
		}
	}
	rlt_sup_tids_sweep(s);
	/* a slot given back by another process (shared scope) wakes nobody here: look again */
	if (s->conns_waiters)
		s->conns_dirty = 1;
}
