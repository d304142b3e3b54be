/*
 * job_signals.c: a call we hold must not keep its thread from its signal handler. The tick
 * reads the thread's signals in /proc; a call that has one to take ends for its handler.
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

/* Kernel-internal return values (include/linux/errno.h) that a notification may be answered
 * with: the thread leaves the call for its signal handler, then the kernel restarts the call
 * (ERESTARTSYS: if the handler has SA_RESTART or there is none, else it fails with EINTR;
 * ERESTARTNOINTR: always). */
#define RLT_ERESTARTSYS 512
#define RLT_ERESTARTNOINTR 513

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
enum rlt_sup_sig rlt_sup_signal_for(struct rlt_sup_job *j)
{
	struct sigview v, lead;
	char path[64];

	if (j->status_fd < 0) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)j->proc->tgid,
		         (int)j->tid);
		j->status_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (j->status_fd < 0)
			return errno == ENOENT || errno == ESRCH ? RLT_SIG_GONE : RLT_SIG_NONE;
	}
	int rc = sigview_read(j->status_fd, &v);
	if (rc)
		return rc == -ESRCH || rc == -ENOENT ? RLT_SIG_GONE : RLT_SIG_NONE;
	if (v.pnd & ~v.blk)
		return RLT_SIG_YES;
	uint64_t shared = v.shd & ~v.blk;
	if (!shared)
		return RLT_SIG_NONE;
	if (v.threads <= 1 || j->tid == j->proc->tgid)
		return RLT_SIG_YES;
	snprintf(path, sizeof path, "/proc/%d/status", (int)j->proc->tgid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = fd < 0 ? -errno : sigview_read(fd, &lead);
	if (fd >= 0)
		close(fd);
	if (rc == 0 && lead.state != 'Z' && (shared & ~lead.blk))
		return RLT_SIG_NONE; /* the leader takes it */
	return v.threads == 2 && rc == 0 && lead.state != 'Z' ? RLT_SIG_YES : RLT_SIG_MAYBE;
}

/* A connection accepted for a call that is given up before its answer waits for the next
 * accept on the same listener (the restarted call). 0, or -ENOMEM. */
static int stash_accepted(struct rlt_sup_job *j)
{
	struct rlt_sup_accepted *a;

	if (j->accepted < 0)
		return 0;
	a = calloc(1, sizeof *a);
	if (!a)
		return -ENOMEM;
	a->lfd = j->fd;
	a->sock = j->accepted;
	a->peer = j->apeer;
	a->conns_peer = j->kpeer;
	a->next = j->proc->stash;
	j->proc->stash = a;
	j->accepted = -1;
	return 0;
}

/*
 * The thread has a signal to take while we hold its call: the call ends now, so that the
 * handler runs, as a blocking call in the kernel ends. One that moved data returns that count
 * (sendfile's offset written back by rlt_sup_job_finish). One that moved nothing gives its
 * charge back and is restarted after the handler: waiting for its socket (or pipe) as the
 * kernel waits, ERESTARTSYS (EINTR without SA_RESTART; EINTR whatever the handler when the
 * socket has a timeout, as sock_intr_errno says); waiting for the throttle (its slot, an
 * RLT_CONNS place), ERESTARTNOINTR: the handler runs, the delay goes on, and the throttle never
 * makes a call fail with EINTR (rlthrottle(7) BEHAVIOUR).
 */
void rlt_sup_job_interrupt(struct rlt_sup *s, struct rlt_sup_job *j)
{
	int code = RLT_ERESTARTNOINTR;

	if (j->phase == PH_READY)
		code = j->timeout_at ? EINTR : RLT_ERESTARTSYS;
	rlt_sup_job_idle(s, j);
	if (j->phase == PH_READY)
		j->phase = PH_NEW; /* unparked: s->parked is counted down */
	rlt_sup_job_settle(j, 0, 0);
	if (j->done) {
		rlt_sup_job_finish(s, j, (int64_t)j->done);
		return;
	}
	if (stash_accepted(j) != 0)
		code = RLT_ERESTARTSYS; /* no room to keep it: closed, as if it had not come */
	rlt_sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
	            "thread %d has a signal: system call %d restarts after its handler",
	            (int)j->tid, j->nr);
	rlt_sup_job_finish(s, j, -code);
}

int rlt_sup_job_prepaid_take(struct rlt_sup *s, const struct rlt_sup_job *j)
{
	rlt_ns_t now = rlt__now();

	for (unsigned i = 0; i < RLT_SUP_PREPAID; i++) {
		struct rlt_sup_prepaid *p = &s->prepaid[i];
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
 * throttle's delay would have made the call fail (rlthrottle(7) BEHAVIOUR). So it is answered ERESTARTNOINTR:
 * the handler runs, the kernel makes the call again, and that call goes through at once and
 * uncharged (rlt_sup_job_prepaid_take), as the charge of this one is kept for it.
 */
int rlt_sup_job_restart_paid(struct rlt_sup *s, struct rlt_sup_job *j)
{
	unsigned slot = RLT_SUP_PREPAID;
	rlt_ns_t now;

	/* a restarted call, too: a handler that makes a notified call may take longer than the
	 * signals' period, and a signal is pending again when the call comes back */
	if (!(j->waited || j->paid) || rlt_sup_signal_for(j) != RLT_SIG_YES)
		return 0;
	now = rlt__now();
	for (unsigned i = 0; i < RLT_SUP_PREPAID && slot == RLT_SUP_PREPAID; i++) {
		const struct rlt_sup_prepaid *p = &s->prepaid[i];
		if (p->tid == 0 || p->until <= now || p->tid == j->tid)
			slot = i;
	}
	if (slot == RLT_SUP_PREPAID)
		return 0; /* no room to remember it: CONTINUEd, as before */
	s->prepaid[slot] = (struct rlt_sup_prepaid){.tid = j->tid, .nr = j->nr,
	                                            .until = now + RLT_SUP_PREPAID_NS};
	memcpy(s->prepaid[slot].args, j->args, sizeof j->args);
	rlt_sup_job_settle(j, j->charge_bytes, j->t.msgs ? j->t.msgs : 1);
	rlt_sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
	            "thread %d has a signal after its wait: system call %d restarts, paid",
	            (int)j->tid, j->nr);
	/* an RLT_CONNS place is released, taken again */
	rlt_sup_job_finish(s, j, -RLT_ERESTARTNOINTR);
	return 1;
}

int rlt_sup_job_continue_paid(struct rlt_sup *s, struct rlt_sup_job *j, uint64_t msgs)
{
	if (rlt_sup_job_restart_paid(s, j))
		return 1;
	if (rlt_sup_notif_continue(s->notify_fd, j->id) == -ENOENT) {
		rlt_sup_job_end(s, j);
		return 1;
	}
	rlt_sup_job_settle(j, j->charge_bytes, msgs);
	return 0;
}
