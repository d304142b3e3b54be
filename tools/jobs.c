/*
 * jobs.c: a call that is not answered at once. A job is a small state machine: it is charged,
 * waits for its slot on the timer heap, waits for its socket (or pipe) on epoll, makes the
 * call for the program when the call must be shortened, and is answered when it is done
 * (see the design note in supervisor.c). Everything here runs under the supervisor's lock,
 * from the lane or the loop (notify_loop.c), and never makes a call that can block.
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
#include "supervisor.h"

/* Kernel-internal return values (include/linux/errno.h) that a notification may be answered
 * with: the thread leaves the call for its signal handler, then the kernel restarts the call
 * (ERESTARTSYS: if the handler has SA_RESTART or there is none, else it fails with EINTR;
 * ERESTARTNOINTR: always). */
#define RLT_ERESTARTSYS 512
#define RLT_ERESTARTNOINTR 513

static unsigned job_bucket(pid_t tid)
{
	return (unsigned)tid % RLT__JOB_BUCKETS;
}

struct rlt__job *rlt__job_of_tid(struct rlt__sup *s, pid_t tid)
{
	for (struct rlt__job *j = s->jobs[job_bucket(tid)]; j; j = j->next)
		if (j->tid == tid)
			return j;
	return NULL;
}

static void job_unlink(struct rlt__sup *s, struct rlt__job *j)
{
	struct rlt__job **pp = &s->jobs[job_bucket(j->tid)];

	while (*pp && *pp != j)
		pp = &(*pp)->next;
	if (*pp)
		*pp = j->next;
}

static void waiters_remove(struct rlt__sup *s, struct rlt__job *j)
{
	struct rlt__job **pp = &s->conns_waiters;

	if (!j->conns_waiting)
		return;
	while (*pp && *pp != j)
		pp = &(*pp)->wnext;
	if (*pp)
		*pp = j->wnext;
	j->conns_waiting = 0;
}

static void unpark(struct rlt__sup *s, struct rlt__job *j)
{
	if (j->park_fd < 0)
		return;
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, j->park_fd, NULL);
	close(j->park_fd);
	j->park_fd = -1;
	if (j->phase == PH_READY)
		s->parked--;
}

/* Takes the job off every queue (heap, epoll, RLT_CONNS list). */
static void job_idle(struct rlt__sup *s, struct rlt__job *j)
{
	rlt__heap_remove(&s->heap, j);
	unpark(s, j);
	waiters_remove(s, j);
}

/* The call is over (answered, or its thread will not come back): what it still holds goes
 * back (an unused charge, an RLT_CONNS slot, a connection nobody took). */
void rlt__job_end(struct rlt__sup *s, struct rlt__job *j)
{
	job_idle(s, j);
	job_unlink(s, j);
	if (j->charged)
		rlt__settle(j->proc->rs, &j->t, 0, 0);
	if (j->conns_held && j->nmask)
		rlt__conns_give_back(s, j->nmask);
	if (j->accepted >= 0)
		close(j->accepted);
	if (j->src_fd >= 0)
		close(j->src_fd);
	if (j->status_fd >= 0)
		close(j->status_fd);
	free(j->buf);
	free(j->iov);
	rlt__sock_put(s, j->sock);
	rlt__proc_put(s, j->proc);
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

void rlt__jobs_graveyard_free(struct rlt__sup *s)
{
	while (s->graveyard) {
		struct rlt__job *j = s->graveyard;
		s->graveyard = j->next;
		free(j);
	}
}

/* What the kernel would write back and return for a call made for the program that moved
 * `moved` bytes (or failed with -errno): most calls return the count itself. */
static int64_t call_answer(struct rlt__job *j, int64_t moved)
{
	if (moved < 0)
		return moved;
	if (j->nr == SYS_recvmmsg && j->op == OP_RECV) {
		/* one message of `moved` bytes (0 at the end of the stream) */
		unsigned len = (unsigned)moved;
		rlt__mem_write(j->tid, j->args[1] + offsetof(struct mmsghdr, msg_len), &len, sizeof len);
		return 1;
	}
	if (j->op == OP_SENDFILE && j->off_addr && moved > 0) {
		/* sendfile with an offset: the kernel writes the new one back */
		int64_t off = j->src_off;
		rlt__mem_write(j->tid, j->off_addr, &off, sizeof off);
	}
	return moved;
}

/* Answers the call (ENOENT: the thread died, nobody is left to answer) and ends it. */
static void finish(struct rlt__sup *s, struct rlt__job *j, int64_t moved)
{
	int64_t answer = call_answer(j, moved);

	if (answer >= 0)
		rlt__notif_return(s->notify_fd, j->id, answer);
	else
		rlt__notif_error(s->notify_fd, j->id, (int)-answer);
	rlt__job_end(s, j);
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
static void park_on(struct rlt__sup *s, struct rlt__job *j, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events | EPOLLONESHOT,
	                         .data.ptr = RLT__JOB_TAG(j)};
	int op = EPOLL_CTL_MOD;

	if (j->park_fd >= 0 && j->park_src != fd)
		unpark(s, j); /* it waited on its socket, now on its pipe, or the other way */
	if (j->park_fd < 0) {
		j->park_src = fd;
		j->park_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (j->park_fd < 0) {
			finish(s, j, -ENOBUFS);
			return;
		}
		op = EPOLL_CTL_ADD;
	}
	if (epoll_ctl(s->epoll_fd, op, j->park_fd, &ev) != 0) {
		finish(s, j, -ENOBUFS);
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
		rlt__heap_push(&s->heap, j); /* out of memory: it waits without its timeout */
	}
}

static void park(struct rlt__sup *s, struct rlt__job *j, uint32_t events)
{
	park_on(s, j, j->sock->dup, events);
}

/* Waits on the timer heap when the slot is still ahead. 1: waiting; 0: go now. */
static int wait_slot(struct rlt__sup *s, struct rlt__job *j, rlt_ns_t at)
{
	if (at <= rlt__now())
		return 0;
	j->deadline = at;
	j->phase = PH_SLOT;
	j->waited = 1;
	if (rlt__heap_push(&s->heap, j) != 0) {
		finish(s, j, -ENOMEM);
		return 1;
	}
	return 1;
}

static int charge(struct rlt__job *j, uint64_t bytes, uint64_t msgs)
{
	if (rlt__charge(j->proc->rs, &j->t, j->var, j->mask, j->sock->conn_block, bytes, msgs) != 0)
		return -j->t.err;
	j->charged = 1;
	j->charge_bytes = bytes;
	j->t.msgs = msgs;
	return 0;
}

static void settle(struct rlt__job *j, uint64_t bytes, uint64_t msgs)
{
	if (!j->charged)
		return;
	rlt__settle(j->proc->rs, &j->t, bytes, msgs);
	j->charged = 0;
}

/* ----- signals: a call we hold must not keep its thread from its handler ----- */

/* What /proc says of a thread's signals. */
struct sigview {
	uint64_t pnd;  /* SigPnd: sent to the thread itself */
	uint64_t shd;  /* ShdPnd: sent to the process, for whichever thread takes it */
	uint64_t blk;  /* SigBlk: the thread's mask */
	unsigned threads;
	char state;    /* State: R, S, D, Z ... */
};

/* The value after "\nKEY:" at or after *from, which moves past it (the keys come in the
 * kernel's order, so each search starts where the last ended). */
static uint64_t field(const char **from, const char *key, int base)
{
	const char *p = strstr(*from, key);

	if (!p)
		return 0;
	*from = p + strlen(key);
	return strtoull(*from, NULL, base);
}

/* Reads a status file from its start (each read is made fresh by the kernel). 0 or -errno. */
static int sigview_read(int fd, struct sigview *v)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	const char *at = buf;

	if (n <= 0)
		return n < 0 ? -errno : -ESRCH;
	buf[n] = '\0';
	const char *st = strstr(buf, "\nState:");
	v->state = st ? st[7 + strspn(st + 7, " \t")] : '?';
	v->threads = (unsigned)field(&at, "\nThreads:", 10);
	v->pnd = field(&at, "\nSigPnd:", 16);
	v->shd = field(&at, "\nShdPnd:", 16);
	v->blk = field(&at, "\nSigBlk:", 16);
	return 0;
}

enum sig_for { SIG_NONE, SIG_MAYBE, SIG_YES, SIG_GONE };

/*
 * Whether the job's thread has a signal to take now. Answering a call "restart" to a thread
 * the kernel did not mark for a signal hands the program errno 512 (ERESTARTSYS leaks out:
 * measured), so this says YES only where the kernel marked this thread: a signal sent to the
 * thread and not blocked by it; or one sent to the process (ShdPnd) that the kernel gave to
 * this thread: the only one, the leader (its first choice), or the other thread than a leader
 * that blocks it. A process signal that another thread may have been given is MAYBE: it may
 * end a call that moved data (a short count is always allowed), never one that moved nothing.
 * GONE: its status cannot be read: the thread has exited (or /proc is not there: the caller
 * asks the kernel whether the notification lives).
 */
static enum sig_for signal_for(struct rlt__job *j)
{
	struct sigview v, lead;
	char path[64];

	if (j->status_fd < 0) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)j->proc->tgid,
		         (int)j->tid);
		j->status_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (j->status_fd < 0)
			return errno == ENOENT || errno == ESRCH ? SIG_GONE : SIG_NONE;
	}
	int rc = sigview_read(j->status_fd, &v);
	if (rc)
		return rc == -ESRCH || rc == -ENOENT ? SIG_GONE : SIG_NONE;
	if (v.pnd & ~v.blk)
		return SIG_YES;
	uint64_t shared = v.shd & ~v.blk;
	if (!shared)
		return SIG_NONE;
	if (v.threads <= 1 || j->tid == j->proc->tgid)
		return SIG_YES;
	snprintf(path, sizeof path, "/proc/%d/status", (int)j->proc->tgid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : sigview_read(fd, &lead);
	if (fd >= 0)
		close(fd);
	if (rc == 0 && lead.state != 'Z' && (shared & ~lead.blk))
		return SIG_NONE; /* the leader takes it */
	return v.threads == 2 && rc == 0 && lead.state != 'Z' ? SIG_YES : SIG_MAYBE;
}

/* A connection accepted for a call that is given up before its answer waits for the next
 * accept on the same listener (the restarted call). 0, or -ENOMEM. */
static int stash_accepted(struct rlt__job *j)
{
	struct rlt__accepted *a;

	if (j->accepted < 0)
		return 0;
	a = calloc(1, sizeof *a);
	if (!a)
		return -ENOMEM;
	a->lfd = j->fd;
	a->sock = j->accepted;
	a->peer = j->apeer;
	a->next = j->proc->stash;
	j->proc->stash = a;
	j->accepted = -1;
	return 0;
}

/*
 * The thread has a signal to take while we hold its call: the call ends now, so that the
 * handler runs, as a blocking call in the kernel ends. One that moved data returns that count
 * (sendfile's offset written back by finish). One that moved nothing gives its charge back and
 * is restarted after the handler: waiting for its socket (or pipe) as the kernel waits,
 * ERESTARTSYS (EINTR without SA_RESTART; EINTR whatever the handler when the socket has a
 * timeout, as sock_intr_errno says); waiting for the throttle (its slot, an RLT_CONNS place),
 * ERESTARTNOINTR: the handler runs, the delay goes on, and the throttle never makes a call fail
 * with EINTR (SPEC 4).
 */
static void interrupt(struct rlt__sup *s, struct rlt__job *j)
{
	int code = RLT_ERESTARTNOINTR;

	if (j->phase == PH_READY)
		code = j->timeout_at ? EINTR : RLT_ERESTARTSYS;
	job_idle(s, j);
	if (j->phase == PH_READY)
		j->phase = PH_NEW; /* unparked: s->parked is counted down */
	settle(j, 0, 0);
	if (j->done) {
		finish(s, j, (int64_t)j->done);
		return;
	}
	if (stash_accepted(j) != 0)
		code = RLT_ERESTARTSYS; /* no room to keep it: closed, as if it had not come */
	rlt__sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
	             "thread %d has a signal: system call %d restarts after its handler",
	             (int)j->tid, j->nr);
	finish(s, j, -code);
}

/* ----- RLT_CONNS without blocking: take a slot now, or join the waiting list ----- */

#define ADD(field, v) atomic_fetch_add_explicit(&(field), (v), memory_order_relaxed)

/* 0: taken in every rule of mask; 1: wait (a delay rule is full); -errno: rejected. */
static int conns_try(struct rlt__sup *s, struct rlt__job *j)
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
			rlt__conns_give_back(s, taken);
		int expired = j->conns_waiting && r->rule.max_wait_ns != RLT_NS_NEVER &&
		              rlt__now() - j->conns_since >= r->rule.max_wait_ns;
		if (r->rule.action == RLT_ACTION_REJECT || expired) {
			if (rs->stats_on) {
				ADD(r->st.calls, 1);
				ADD(r->st.rejected, 1);
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
				rlt__heap_push(&s->heap, j);
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
			ADD(r->st.calls, 1);
			ADD(r->st.allowed, 1);
			ADD(r->st.units, 1);
			if (d) {
				ADD(r->st.delayed, 1);
				ADD(r->st.delay_ns_total, d);
				rlt__stat_max(&r->st.delay_ns_max, d);
			}
		}
	}
	waiters_remove(s, j);
	rlt__heap_remove(&s->heap, j);
	return 0;
}

/* The common tail of a charged call: its slot, then an RLT_CONNS place. 0 when both are had;
 * 1 when the job waits (on the timer heap or for a close) or was finished (rejected). */
static int slot_then_conns(struct rlt__sup *s, struct rlt__job *j)
{
	if (wait_slot(s, j, j->t.go))
		return 1;
	if (j->nmask && !j->conns_held) {
		int rc = conns_try(s, j);
		if (rc == 1)
			return 1;
		if (rc < 0) {
			finish(s, j, rc);
			return 1;
		}
		j->conns_held = 1;
	}
	return 0;
}

void rlt__conns_give_back(struct rlt__sup *s, uint32_t mask)
{
	/* wakes waiters of other processes in shared scope; ours are retried by the loop, not
	 * from here: this runs inside other jobs' steps */
	rlt__conns_release(s->rs, mask);
	s->conns_dirty = 1;
}

/* ----- the state machines ----- */

int rlt__job_nonblocking(const struct rlt__job *j)
{
	int fl = fcntl(j->sock->dup, F_GETFL);
	return (j->flags & MSG_DONTWAIT) || (fl >= 0 && (fl & O_NONBLOCK));
}

/* Whether this call is one restarted by restart_paid (then forgotten: it goes through once). */
static int prepaid_take(struct rlt__sup *s, const struct rlt__job *j)
{
	rlt_ns_t now = rlt__now();

	for (unsigned i = 0; i < RLT__PREPAID; i++) {
		struct rlt__prepaid *p = &s->prepaid[i];
		if (p->tid == j->tid && p->until > now && p->nr == j->nr &&
		    memcmp(p->args, j->args, sizeof p->args) == 0) {
			p->tid = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * A call that waited for the throttle is CONTINUEd when its turn comes; if its thread has a
 * signal pending by then, the kernel's own call (a connect waiting for its handshake, a send
 * waiting for room) sees it and fails with EINTR when the handler has no SA_RESTART: the
 * throttle's delay would have made the call fail (SPEC 4). So it is answered ERESTARTNOINTR:
 * the handler runs, the kernel makes the call again, and that call goes through at once and
 * uncharged (prepaid_take), as the charge of this one is kept for it. 1: answered so.
 */
static int restart_paid(struct rlt__sup *s, struct rlt__job *j)
{
	unsigned slot = RLT__PREPAID;
	rlt_ns_t now;

	/* a restarted call, too: a handler that makes a notified call may take longer than the
	 * signals' period, and a signal is pending again when the call comes back */
	if (!(j->waited || j->paid) || signal_for(j) != SIG_YES)
		return 0;
	now = rlt__now();
	for (unsigned i = 0; i < RLT__PREPAID && slot == RLT__PREPAID; i++)
		if (s->prepaid[i].tid == 0 || s->prepaid[i].until <= now || s->prepaid[i].tid == j->tid)
			slot = i;
	if (slot == RLT__PREPAID)
		return 0; /* no room to remember it: CONTINUEd, as before */
	s->prepaid[slot] = (struct rlt__prepaid){.tid = j->tid, .nr = j->nr,
	                                         .until = now + RLT__PREPAID_NS};
	memcpy(s->prepaid[slot].args, j->args, sizeof j->args);
	settle(j, j->charge_bytes, j->t.msgs ? j->t.msgs : 1);
	rlt__sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
	             "thread %d has a signal after its wait: system call %d restarts, paid",
	             (int)j->tid, j->nr);
	finish(s, j, -RLT_ERESTARTNOINTR); /* an RLT_CONNS place is given back, taken again */
	return 1;
}

/* OP_CONTINUE: charge, slot, (RLT_CONNS), CONTINUE. */
static void step_continue(struct rlt__sup *s, struct rlt__job *j)
{
	if (!j->charged && !j->paid && prepaid_take(s, j))
		j->paid = 1; /* restarted after its handler: it has paid and waited */
	if (!j->charged && !j->paid) {
		int rc = charge(j, j->total, j->t.msgs ? j->t.msgs : 1);
		if (rc) {
			rlt__sup_log(s, RLT_LOG_DEBUG, j->proc->tgid, "system call %d on fd %d rejected",
			             j->nr, j->fd);
			finish(s, j, rc);
			return;
		}
	}
	if (slot_then_conns(s, j))
		return;
	if (restart_paid(s, j))
		return;
	if (rlt__notif_continue(s->notify_fd, j->id) == -ENOENT) {
		rlt__job_end(s, j);
		return;
	}
	settle(j, j->charge_bytes, j->t.msgs);
	if (j->nmask) {
		/* the socket holds the slots until its fd is closed */
		j->sock->conns_mask |= j->nmask;
		j->nmask = 0;
	}
	rlt__job_end(s, j);
}

/* Bytes [done, done + len) of the program's buffer (flat or iovec) to or from ours. */
static int prog_data(struct rlt__job *j, size_t len, int write)
{
	uint64_t base = j->op == OP_SEND || j->op == OP_RECV ? j->args[1] : 0;

	if (j->iov)
		return write ? rlt__iov_scatter(j->tid, j->iov, j->iovcnt, j->done, j->buf, len)
		             : rlt__iov_gather(j->tid, j->iov, j->iovcnt, j->done, j->buf, len);
	return write ? rlt__mem_write(j->tid, base + j->done, j->buf, len)
	             : rlt__mem_read(j->tid, base + j->done, j->buf, len);
}

/* What a receive made for the program writes besides the data: a stream has no source
 * address and no ancillary data here. */
static void recv_out_params(struct rlt__job *j)
{
	if (j->fromlen_addr && j->from_addr) {
		socklen_t zero = 0;
		rlt__mem_write(j->tid, j->fromlen_addr, &zero, sizeof zero);
	}
	if (j->msg_addr) {
		struct msghdr h;
		if (rlt__mem_read(j->tid, j->msg_addr, &h, sizeof h) == 0) {
			h.msg_namelen = 0;
			h.msg_controllen = 0;
			h.msg_flags = 0;
			rlt__mem_write(j->tid, j->msg_addr, &h, sizeof h);
		}
	}
}

/* OP_SEND and OP_RECV: a stream call made by us, piece by piece. */
/* The job's buffer, at least len bytes. 0 or -ENOMEM. */
static int job_buf(struct rlt__job *j, size_t len)
{
	if (len <= j->buf_len)
		return 0;
	void *b = realloc(j->buf, len);
	if (!b)
		return -ENOMEM;
	j->buf = b;
	j->buf_len = len;
	return 0;
}

static void step_io(struct rlt__sup *s, struct rlt__job *j)
{
	uint64_t piece_max = rlt__piece(s->rs, j->var, j->mask);

	/* Bounded: every round either moves bytes toward total, or returns. */
	for (;;) {
		if (!j->charged) {
			uint64_t want = j->total - j->done;
			uint64_t piece = want < piece_max ? want : piece_max;
			if (j->op != OP_RECV && j->nonblock) {
				uint64_t a = rlt__available(j->proc->rs, j->var, j->mask, j->sock->conn_block,
				                            rlt__now());
				if (a > piece)
					piece = a < want ? a : want;
			}
			if (job_buf(j, piece) != 0) {
				finish(s, j, j->done ? (int64_t)j->done : -ENOMEM);
				return;
			}
			int rc = charge(j, piece, j->done == 0);
			if (rc) {
				finish(s, j, j->done ? (int64_t)j->done : rc);
				return;
			}
			j->piece = piece;
		}
		if (wait_slot(s, j, j->t.go))
			return;

		ssize_t n;
		if (j->op == OP_SENDFILE) {
			/* the file's next bytes, read at our offset (the program's file position moves
			 * with what is sent, below); a short read is the end of the file */
			ssize_t r = pread(j->src_fd, j->buf, j->piece, j->src_off);
			if (r <= 0) {
				int e = errno;
				settle(j, 0, 0);
				finish(s, j, j->done ? (int64_t)j->done : r == 0 ? 0 : -e);
				return;
			}
			j->piece = (uint64_t)r;
			if (!rlt__notif_valid(s->notify_fd, j->id)) {
				rlt__job_end(s, j);
				return;
			}
			n = send(j->sock->dup, j->buf, j->piece, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				j->src_off += n;
				if (!j->off_addr)
					lseek(j->src_fd, j->src_off, SEEK_SET);
			}
		} else if (j->op == OP_SEND) {
			int rc = prog_data(j, j->piece, 0);
			if (rc) {
				settle(j, 0, 0);
				finish(s, j, j->done ? (int64_t)j->done : rc);
				return;
			}
			/* TOCTOU: what we read is acted on only if the call is still the program's */
			if (!rlt__notif_valid(s->notify_fd, j->id)) {
				rlt__job_end(s, j);
				return;
			}
			n = send(j->sock->dup, j->buf, j->piece,
			         MSG_DONTWAIT | MSG_NOSIGNAL | (j->flags & (MSG_MORE | MSG_OOB | MSG_EOR)));
		} else {
			if (!rlt__notif_valid(s->notify_fd, j->id)) {
				rlt__job_end(s, j);
				return;
			}
			n = recv(j->sock->dup, j->buf, j->piece, MSG_DONTWAIT | (j->flags & MSG_OOB));
		}
		int err = errno;
		if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			if (j->nonblock) {
				settle(j, 0, 0);
				finish(s, j, j->done ? (int64_t)j->done : -EAGAIN);
				return;
			}
			/* blocking: the call waits for its socket, holding its charge */
			park(s, j, j->op != OP_RECV ? EPOLLOUT : EPOLLIN);
			return;
		}
		if (n < 0) {
			settle(j, 0, 0);
			if (err == EPIPE && j->op != OP_RECV && !(j->flags & MSG_NOSIGNAL) && !j->done)
				syscall(SYS_tgkill, j->proc->tgid, j->tid, SIGPIPE);
			finish(s, j, j->done ? (int64_t)j->done : -err);
			return;
		}
		if (j->op == OP_RECV && n > 0) {
			int rc = prog_data(j, (size_t)n, 1);
			if (rc) {
				/* the program's buffer is not all there: as the kernel would, EFAULT;
				 * the bytes are lost to it, as they would be */
				settle(j, (uint64_t)n, j->done == 0);
				finish(s, j, j->done ? (int64_t)j->done : rc);
				return;
			}
		}
		settle(j, (uint64_t)n, j->done == 0);
		j->done += (uint64_t)n;
		if (j->op == OP_RECV && j->done == (uint64_t)n)
			recv_out_params(j);
		int more = n > 0 && j->done < j->total &&
		           (j->op != OP_RECV ? !j->nonblock : j->waitall);
		/* a signal for the thread ends the call with what it moved, as the kernel ends a
		 * blocking call interrupted after it moved data: the handler runs within a piece */
		enum sig_for f = more ? signal_for(j) : SIG_NONE;
		if (!more || f == SIG_YES || f == SIG_MAYBE) {
			finish(s, j, (int64_t)j->done);
			return;
		}
	}
}

/*
 * OP_SPLICE_SEND / OP_SPLICE_RECV: splice between the program's pipe and a stream socket (Go's
 * io.Copy between two connections, proxies). One piece a call, as splice may always return
 * less than asked (callers loop). The program's pipe is reached through our duplicate, whose
 * blocking is the program's, so nothing is asked of it that could wait:
 *  - to the socket: tee (SPLICE_F_NONBLOCK) shows the pipe's next bytes without taking them,
 *    send(MSG_DONTWAIT) sends what the socket takes, and exactly that is then read out of the
 *    pipe (it is there); an empty pipe is waited for on epoll, not in a call;
 *  - from the socket: no more than the pipe has room for is received (MSG_DONTWAIT) and
 *    written into it; a full pipe is waited for on epoll.
 * The charge is given back while the call waits for its pipe, and taken again after.
 */
static void step_splice(struct rlt__sup *s, struct rlt__job *j)
{
	int to_sock = j->op == OP_SPLICE_SEND;
	ssize_t n;
	int err;

	if (!j->charged) {
		uint64_t pmax = rlt__piece(s->rs, j->var, j->mask);
		uint64_t piece = j->total < pmax ? j->total : pmax;
		if (job_buf(j, piece) != 0) {
			finish(s, j, -ENOMEM);
			return;
		}
		int rc = charge(j, piece, 1);
		if (rc) {
			finish(s, j, rc);
			return;
		}
		j->piece = piece;
	}
	if (wait_slot(s, j, j->t.go))
		return;
	if (to_sock) {
		ssize_t t = tee(j->src_fd, s->tee_pipe[1], j->piece, SPLICE_F_NONBLOCK);
		if (t <= 0) {
			err = errno;
			settle(j, 0, 0);
			if (t == 0) /* empty, and no writer left: the end */
				finish(s, j, 0);
			else if (err != EAGAIN || j->nonblock)
				finish(s, j, -err);
			else
				park_on(s, j, j->src_fd, EPOLLIN);
			return;
		}
		for (ssize_t got = 0; got < t;) { /* our own pipe: all of it is there */
			ssize_t k = read(s->tee_pipe[0], (char *)j->buf + got, (size_t)(t - got));
			if (k <= 0) {
				settle(j, 0, 0);
				finish(s, j, -EIO);
				return;
			}
			got += k;
		}
		if (!rlt__notif_valid(s->notify_fd, j->id)) {
			rlt__job_end(s, j);
			return;
		}
		n = send(j->sock->dup, j->buf, (size_t)t,
		         MSG_DONTWAIT | MSG_NOSIGNAL | ((j->flags & SPLICE_F_MORE) ? MSG_MORE : 0));
		err = errno;
		/* what went out leaves the pipe, as splice would have taken it */
		if (n > 0 && read(j->src_fd, j->buf, (size_t)n) != n)
			rlt__sup_log(s, RLT_LOG_WARN, j->proc->tgid,
			             "splice: the pipe of fd %d was read by another thread meanwhile",
			             (int)j->args[0]);
	} else {
		int cap = fcntl(j->src_fd, F_GETPIPE_SZ), queued = 0;
		if (cap < 0 || ioctl(j->src_fd, FIONREAD, &queued) != 0)
			cap = queued = 0;
		size_t room = cap > queued ? (size_t)(cap - queued) : 0;
		if (!room) {
			settle(j, 0, 0);
			if (j->nonblock)
				finish(s, j, -EAGAIN);
			else
				park_on(s, j, j->src_fd, EPOLLOUT);
			return;
		}
		if (!rlt__notif_valid(s->notify_fd, j->id)) {
			rlt__job_end(s, j);
			return;
		}
		n = recv(j->sock->dup, j->buf, j->piece < room ? j->piece : room, MSG_DONTWAIT);
		err = errno;
		for (ssize_t put = 0; n > 0 && put < n;) { /* there is room: this does not wait */
			ssize_t k = write(j->src_fd, (char *)j->buf + put, (size_t)(n - put));
			if (k <= 0) {
				rlt__sup_log(s, RLT_LOG_WARN, j->proc->tgid,
				             "splice: %zd bytes lost: the pipe of fd %d filled meanwhile",
				             n - put, (int)j->args[2]);
				break;
			}
			put += k;
		}
	}
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
		if (j->nonblock) {
			settle(j, 0, 0);
			finish(s, j, -EAGAIN);
		} else {
			park(s, j, to_sock ? EPOLLOUT : EPOLLIN); /* holding its charge */
		}
		return;
	}
	if (n < 0) {
		settle(j, 0, 0);
		if (err == EPIPE && to_sock)
			syscall(SYS_tgkill, j->proc->tgid, j->tid, SIGPIPE);
		finish(s, j, -err);
		return;
	}
	settle(j, (uint64_t)n, 1);
	finish(s, j, n);
}

/* OP_DGRAM_RECV: a datagram is charged whole, once it is there to be measured. */
static void step_dgram_recv(struct rlt__sup *s, struct rlt__job *j)
{
	if (!j->charged && prepaid_take(s, j)) {
		/* restarted after its handler: it has paid and waited (if another thread took
		 * its datagram meanwhile, the kernel waits for the next, unthrottled) */
		j->paid = 1;
		if (restart_paid(s, j))
			return;
		rlt__notif_continue(s->notify_fd, j->id);
		rlt__job_end(s, j);
		return;
	}
	if (!j->charged) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		ssize_t n = recvfrom(j->sock->dup, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT,
		                     (struct sockaddr *)&ss, &sl);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (j->nonblock) {
				/* nothing to charge: the kernel answers EAGAIN itself */
				rlt__notif_continue(s->notify_fd, j->id);
				rlt__job_end(s, j);
				return;
			}
			park(s, j, EPOLLIN);
			return;
		}
		if (n < 0) {
			/* an error the real call will report itself */
			rlt__notif_continue(s->notify_fd, j->id);
			rlt__job_end(s, j);
			return;
		}
		j->mask = j->sock->mask[RLT_VAR_RECV];
		if (!j->sock->peer.af && sl > 0) {
			struct rlt__peer p;
			rlt__peer_from_sockaddr(&p, (struct sockaddr *)&ss, sl);
			if (p.af)
				j->mask = rlt__match(s->rs, RLT_VAR_RECV, &p);
		}
		if (!j->mask) {
			rlt__notif_continue(s->notify_fd, j->id);
			rlt__job_end(s, j);
			return;
		}
		int rc = charge(j, (uint64_t)n, 1);
		if (rc) {
			/* a policer drops the packet */
			if (rlt__notif_valid(s->notify_fd, j->id))
				recv(j->sock->dup, NULL, 0, MSG_DONTWAIT | MSG_TRUNC);
			finish(s, j, rc);
			return;
		}
	}
	if (wait_slot(s, j, j->t.go))
		return;
	if (restart_paid(s, j))
		return;
	if (rlt__notif_continue(s->notify_fd, j->id) == -ENOENT) {
		rlt__job_end(s, j);
		return;
	}
	settle(j, j->charge_bytes, 1);
	rlt__job_end(s, j);
}

static struct rlt__accepted *stash_take(struct rlt__proc *p, int lfd)
{
	for (struct rlt__accepted **pp = &p->stash; *pp; pp = &(*pp)->next)
		if ((*pp)->lfd == lfd) {
			struct rlt__accepted *a = *pp;
			*pp = a->next;
			return a;
		}
	return NULL;
}

/* OP_ACCEPT: accepted by us (so that the rules can see the peer, and a shed connection is
 * taken off the queue), charged after, installed in the program with SECCOMP_ADDFD. */
static void step_accept(struct rlt__sup *s, struct rlt__job *j)
{
	if (j->accepted < 0) {
		struct rlt__accepted *a = stash_take(j->proc, j->fd);
		if (a) {
			j->accepted = a->sock;
			j->apeer = a->peer;
			if (a->conns_mask)
				rlt__conns_give_back(s, a->conns_mask);
			free(a);
		} else {
			struct pollfd pfd = {j->sock->dup, POLLIN, 0};
			struct sockaddr_storage ss;
			socklen_t sl = sizeof ss;
			int c = -1;
			if (poll(&pfd, 1, 0) == 1) {
				if (!rlt__notif_valid(s->notify_fd, j->id)) {
					rlt__job_end(s, j);
					return;
				}
				c = accept4(j->sock->dup, (struct sockaddr *)&ss, &sl,
				            SOCK_CLOEXEC | (j->flags & SOCK_NONBLOCK));
				if (c < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
					finish(s, j, -errno);
					return;
				}
			}
			if (c < 0) {
				if (rlt__job_nonblocking(j))
					finish(s, j, -EAGAIN);
				else
					park(s, j, EPOLLIN);
				return;
			}
			j->accepted = c;
			rlt__peer_from_sockaddr(&j->apeer, (struct sockaddr *)&ss, sl);
		}
		struct rlt__peer ap = j->apeer;
		ap.port = j->sock->local_port; /* accept rules filter on the listening port */
		j->mask = s->rs->n[RLT_VAR_ACCEPT] ? rlt__match(s->rs, RLT_VAR_ACCEPT, &ap) : 0;
		struct rlt__peer cp = j->apeer;
		if (!cp.af)
			cp.af = j->sock->af;
		j->nmask = s->rs->n[RLT_VAR_CONNS] ? rlt__match(s->rs, RLT_VAR_CONNS, &cp) : 0;
		int rc = charge(j, 0, 1);
		if (rc) {
			/* shed, as an overloaded server does: off the queue and closed */
			rlt__sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
			             "accept on fd %d: connection shed", j->fd);
			finish(s, j, rc);
			return;
		}
	}
	if (slot_then_conns(s, j))
		return;
	if (j->args[1] && j->args[2]) {
		socklen_t have, sl;
		struct sockaddr_storage ss;
		sl = sizeof ss;
		if (getpeername(j->accepted, (struct sockaddr *)&ss, &sl) == 0 &&
		    rlt__mem_read(j->tid, j->args[2], &have, sizeof have) == 0) {
			rlt__mem_write(j->tid, j->args[1], &ss, have < sl ? have : sl);
			rlt__mem_write(j->tid, j->args[2], &sl, sizeof sl);
		}
	}
	int nfd = rlt__notif_addfd_send(s->notify_fd, j->id, j->accepted, j->cloexec);
	if (nfd == -ENOENT) {
		rlt__job_end(s, j); /* the thread died: the connection is closed */
		return;
	}
	if (nfd < 0) {
		finish(s, j, nfd);
		return;
	}
	settle(j, 0, 1);
	if (rlt__fd_adopt(s, j->proc, nfd, j->accepted, SOCK_STREAM, &j->apeer,
	                  j->conns_held ? j->nmask : 0) == 0) {
		j->accepted = -1; /* the cache owns it now, and its RLT_CONNS slots */
		j->conns_held = 0;
	}
	rlt__job_end(s, j);
}

void rlt__job_step(struct rlt__sup *s, struct rlt__job *j)
{
	if (j->phase == PH_READY) {
		s->parked--;
		rlt__heap_remove(&s->heap, j); /* its timeout, if it has one */
	}
	j->phase = PH_NEW;
	j->next_look = 0; /* out of its wait: looked at every tick again */
	switch (j->op) {
	case OP_CONTINUE: step_continue(s, j); break;
	case OP_SEND:
	case OP_SENDFILE:
	case OP_RECV: step_io(s, j); break;
	case OP_DGRAM_RECV: step_dgram_recv(s, j); break;
	case OP_SPLICE_SEND:
	case OP_SPLICE_RECV: step_splice(s, j); break;
	case OP_ACCEPT: step_accept(s, j); break;
	}
}


struct rlt__job *rlt__job_new(struct rlt__sup *s, const struct seccomp_notif *req,
                                struct rlt__proc *p, int fd, struct rlt__sock *k,
                                enum rlt__op op, enum rlt_var var, uint32_t mask)
{
	struct rlt__job *j = calloc(1, sizeof *j);

	if (!j)
		return NULL;
	j->id = req->id;
	j->tid = (pid_t)req->pid;
	j->nr = req->data.nr;
	memcpy(j->args, req->data.args, sizeof j->args);
	j->proc = p;
	p->jobs++;
	j->fd = fd;
	j->sock = rlt__sock_hold(k);
	j->op = op;
	j->var = var;
	j->mask = mask;
	j->park_fd = -1;
	j->accepted = -1;
	j->src_fd = -1;
	j->status_fd = -1;
	j->heap_i = SIZE_MAX;
	/* a new call is looked at from the next tick on */
	rlt_ns_t tick = rlt__now() + RLT__TICK_NS;
	if (!s->njobs || s->next_tick > tick)
		s->next_tick = tick;
	j->next = s->jobs[job_bucket(j->tid)];
	s->jobs[job_bucket(j->tid)] = j;
	s->njobs++;
	return j;
}

/* Reads the program's iovec into the job. 0 or -errno. */
int rlt__job_iov(struct rlt__job *j, uint64_t addr, uint64_t cnt)
{
	j->iov = calloc(cnt ? cnt : 1, sizeof *j->iov);
	if (!j->iov)
		return -ENOMEM;
	j->iovcnt = (unsigned)cnt;
	return rlt__iov_read(j->tid, addr, cnt, j->iov, &j->total);
}

void rlt__jobs_run_due(struct rlt__sup *s)
{
	rlt_ns_t now = rlt__now();
	struct rlt__job *j;

	/* Bounded by the jobs due now: each leaves the heap before it is stepped. */
	while ((j = rlt__heap_top(&s->heap)) && j->deadline <= now) {
		rlt__heap_remove(&s->heap, j);
		if (j->phase == PH_READY) {
			/* SO_RCVTIMEO/SO_SNDTIMEO ran out: what moved, or EAGAIN, as the kernel says */
			unpark(s, j);
			j->phase = PH_NEW;
			settle(j, 0, 0);
			finish(s, j, j->done ? (int64_t)j->done : -EAGAIN);
			continue;
		}
		if (j->conns_waiting) {
			/* max-wait for an RLT_CONNS slot is over: conns_try rejects it */
			if (j->op == OP_ACCEPT)
				step_accept(s, j);
			else
				step_continue(s, j);
			continue;
		}
		rlt__job_step(s, j);
	}
}

void rlt__jobs_retry_conns(struct rlt__sup *s)
{
	struct rlt__job *list[64];
	unsigned n = 0;

	s->conns_dirty = 0;
	for (struct rlt__job *j = s->conns_waiters; j && n < 64; j = j->wnext)
		list[n++] = j;
	/* oldest first: the list is pushed at the head */
	for (unsigned i = n; i-- > 0;) {
		struct rlt__job *j = list[i];
		if (j->op == OP_ACCEPT)
			step_accept(s, j);
		else
			step_continue(s, j);
	}
	if (n == 64)
		s->conns_dirty = 1;
}

/* A call parked this long on a quiet socket is looked at every RLT__IDLE_LOOK_NS only: a
 * reading of /proc costs some 4 us, and a program may park hundreds of idle readers. */
#define RLT__IDLE_AFTER_NS (100 * 1000000ull)
#define RLT__IDLE_LOOK_NS (40 * 1000000ull)

/* At most some 2000 readings of /proc a second, however many calls wait: each waiting call is
 * read every njobs * RLT__LOOK_SHARE_NS (every tick while that is shorter than one), so the
 * supervisor's cost stays flat and a handler's latency grows with the number of waiters
 * (100 waiters: 50 ms; 400: 200 ms). */
#define RLT__LOOK_SHARE_NS (500 * 1000ull)

void rlt__jobs_tick(struct rlt__sup *s)
{
	rlt_ns_t now = rlt__now(), next = now + RLT__IDLE_LOOK_NS;
	rlt_ns_t every = (rlt_ns_t)s->njobs * RLT__LOOK_SHARE_NS;

	/* Bounded by the jobs alive now; ending one does not end another. */
	for (unsigned b = 0; b < RLT__JOB_BUCKETS; b++) {
		struct rlt__job *j = s->jobs[b];
		while (j) {
			struct rlt__job *nj = j->next;
			if ((j->phase == PH_SLOT || j->phase == PH_READY || j->conns_waiting) &&
			    now >= j->next_look) {
				enum sig_for f = signal_for(j);
				if (f == SIG_GONE && !rlt__notif_valid(s->notify_fd, j->id))
					rlt__job_end(s, j); /* its thread died with its call */
				else if (f == SIG_YES || (f == SIG_MAYBE && j->done))
					interrupt(s, j);
				else if (j->phase == PH_READY &&
				         now - j->parked_at >= RLT__IDLE_AFTER_NS)
					/* on one grid: idle readers are read in the same tick */
					j->next_look = (now / RLT__IDLE_LOOK_NS + 1) *
					               RLT__IDLE_LOOK_NS;
				if (j->phase != PH_GONE && every > RLT__TICK_NS &&
				    j->next_look < now + every)
					j->next_look = now + every;
			}
			if (j->phase != PH_GONE && j->next_look < next)
				next = j->next_look;
			j = nj;
		}
	}
	/* no sooner than a tick, no later than the first job due: idle readers alone wake us
	 * every RLT__IDLE_LOOK_NS, not every tick */
	s->next_tick = next > now + RLT__TICK_NS ? next : now + RLT__TICK_NS;
}

void rlt__jobs_sweep(struct rlt__sup *s)
{
	/* a waiting call whose thread died (the tick sees most of them first) */
	for (unsigned b = 0; b < RLT__JOB_BUCKETS; b++) {
		struct rlt__job *j = s->jobs[b];
		while (j) {
			struct rlt__job *next = j->next;
			if ((j->phase == PH_SLOT || j->phase == PH_READY || j->conns_waiting) &&
			    !rlt__notif_valid(s->notify_fd, j->id))
				rlt__job_end(s, j);
			j = next;
		}
	}
	rlt__tids_sweep(s);
	/* a slot given back by another process (shared scope) wakes nobody here: look again */
	if (s->conns_waiters)
		s->conns_dirty = 1;
}
