/*
 * notify_loop.c: the supervisor's two threads. The lane sleeps in NOTIF_RECV and hands each
 * notification to notif_dispatch.c; the loop sleeps in epoll_wait and moves jobs on (job_*.c) when
 * their slot comes, their socket is ready or their process ends, forwards signals to the
 * command and notices its end. Both take the supervisor's lock for what woke them. See the
 * docs/DESIGN.md ("The supervisor in detail").
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

/* epoll tags: small even numbers for our own fds; jobs are tagged with bit 0; the rest are
 * processes (their pidfd). */
#define TAG_NOTIFY ((void *)(uintptr_t)2)
#define TAG_TIMER ((void *)(uintptr_t)4)
#define TAG_CHILD ((void *)(uintptr_t)6)
#define TAG_SIGNAL ((void *)(uintptr_t)8)

/* Ended threads' ids are forgotten this often (and RLT_CONNS waiters look again). */
#define SWEEP_MS 250

/* ----- timers and the loop ----- */

static void arm_timer(struct rlt_sup *s)
{
	struct rlt_sup_job *top = rlt_sup_heap_top(&s->heap);
	rlt_ns_t d = top ? (top->deadline ? top->deadline : 1) : 0;
	struct itimerspec its;

	/* while a call is held, its thread's signals are looked at every tick */
	if (s->njobs && (!d || s->next_tick < d))
		d = s->next_tick ? s->next_tick : 1;
	/* closes looked for while a slot is waited for (job_conns.c) */
	rlt_ns_t sweep = rlt_sup_conns_sweep_due(s);
	if (sweep && (!d || sweep < d))
		d = sweep;

	/* one system call per change of the earliest deadline, not one per event: the fast path
	 * of a file read is two ioctls, and a third call here was a third of its cost */
	if (d == s->timer_armed)
		return;
	s->timer_armed = d;
	memset(&its, 0, sizeof its);
	if (d) {
		its.it_value.tv_sec = (time_t)(d / RLT_NS_PER_SEC);
		its.it_value.tv_nsec = (long)(d % RLT_NS_PER_SEC);
	}
	timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void forward_signal(struct rlt_sup *s, int sig_fd)
{
	struct signalfd_siginfo si;

	if (read(sig_fd, &si, sizeof si) != (ssize_t)sizeof si)
		return;
	/* SIGINT and SIGQUIT from the terminal reach the command's process group themselves */
	if ((si.ssi_signo == SIGINT || si.ssi_signo == SIGQUIT) && si.ssi_code == SI_KERNEL)
		return;
	if (s->child > 0)
		kill(s->child, (int)si.ssi_signo);
}

/* What follows any batch of events, from the loop or the lane: RLT_CONNS waiters after a
 * slot came free, and the timer for the earliest due job. */
static void after_events(struct rlt_sup *s)
{
	if (s->conns_dirty)
		rlt_sup_jobs_retry_conns(s);
	arm_timer(s);
}

/* ----- the notification lane ----- */

/*
 * Why a second thread. A file read under --seccomp is one notification, and its cost is two
 * context switches: the program's thread to us and back. A thread blocked in NOTIF_RECV
 * itself (not in epoll_wait) is woken by the kernel on the CPU of the thread that made the
 * call (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: epoll loses that hint), hands the CPU back the
 * same way, and saves the epoll_wait of every call; across CPUs that halved the cost of a
 * 128 KiB file read here (see tests/integration/test_seccomp_fileread.sh). The lane only
 * receives: it handles each notification under the lock exactly as the loop would, so every
 * job, timer and cache stays the loop's single-threaded state with one more entrance.
 */
static int wake_signal(void)
{
	return SIGRTMIN + 1;
}

static void on_wake(int sig)
{
	(void)sig; /* interrupts NOTIF_RECV: the lane looks at lane_stop */
}

static void *lane_main(void *arg)
{
	struct rlt_sup *s = arg;
	sigset_t wake;

	sigemptyset(&wake);
	sigaddset(&wake, wake_signal());
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	while (!atomic_load_explicit(&s->lane_stop, memory_order_acquire)) {
		struct seccomp_notif req;
		memset(&req, 0, sizeof req);
		if (ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) {
			if (errno == ENOENT || errno == EINTR)
				continue; /* the task died before we read it; our wake signal */
			break;        /* the loop takes the listener back (lane_done) */
		}
		pthread_mutex_lock(&s->lock);
		rlt_sup_on_notification(s, &req);
		after_events(s);
		pthread_mutex_unlock(&s->lock);
	}
	atomic_store_explicit(&s->lane_done, 1, memory_order_release);
	return NULL;
}

/* Starts the lane; the loop keeps the listener for its hang-up only. 0, or the loop receives
 * notifications itself (no thread could be made). */
static int lane_start(struct rlt_sup *s)
{
	struct sigaction sa;
	sigset_t wake;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_wake; /* no SA_RESTART: NOTIF_RECV must return */
	sigemptyset(&sa.sa_mask);
	if (sigaction(wake_signal(), &sa, NULL) != 0)
		return -1;
	/* blocked everywhere but in the lane, which unblocks it itself */
	sigemptyset(&wake);
	sigaddset(&wake, wake_signal());
	pthread_sigmask(SIG_BLOCK, &wake, NULL);
	if (pthread_create(&s->lane, NULL, lane_main, s) != 0)
		return -1;
	s->lane_running = 1;
	return 0;
}

/* Bounded: 200 wake signals 1 ms apart (a signal sent just before the lane enters NOTIF_RECV
 * is missed; the next one is not). A lane that does not stop is left behind, asleep. */
static void lane_stop(struct rlt_sup *s)
{
	struct timespec ms = {0, 1000000};

	if (!s->lane_running)
		return;
	atomic_store_explicit(&s->lane_stop, 1, memory_order_release);
	for (int i = 0; i < 200 && !atomic_load_explicit(&s->lane_done, memory_order_acquire);
	     i++) {
		pthread_kill(s->lane, wake_signal());
		nanosleep(&ms, NULL);
	}
	if (atomic_load_explicit(&s->lane_done, memory_order_acquire)) {
		pthread_join(s->lane, NULL);
	} else {
		pthread_detach(s->lane);
		/* never released: a lane that wakes later must wait here, not touch what the
		 * supervisor frees next */
		pthread_mutex_lock(&s->lock);
	}
	s->lane_running = 0;
}

int rlt_sup_notify_loop(struct rlt_sup *s, int child_pidfd, int sig_fd, int *status,
                        struct rlt_error *err)
{
	struct epoll_event ev;
	int child_done = 0, hup = 0, rc = 0, lane_watched = 0;
	rlt_ns_t next_sweep = rlt__now() + SWEEP_MS * 1000000ull;

	pthread_mutex_init(&s->lock, NULL);
	/* With the lane the loop asks for the listener's hang-up only (epoll always reports
	 * EPOLLHUP): a notification wakes the lane alone. */
	ev.events = lane_start(s) == 0 ? 0 : EPOLLIN;
	ev.data.ptr = TAG_NOTIFY;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->notify_fd, &ev) != 0)
		goto fail;
	ev.events = EPOLLIN;
	ev.data.ptr = TAG_TIMER;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->timer_fd, &ev) != 0)
		goto fail;
	ev.data.ptr = TAG_CHILD;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, child_pidfd, &ev) != 0)
		goto fail;
	if (sig_fd >= 0) {
		ev.data.ptr = TAG_SIGNAL;
		if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, sig_fd, &ev) != 0)
			goto fail;
	}

	/* Until no task of the command is left (the listener hangs up) and the command is
	 * reaped: background children are supervised to their end, as strace -f follows them. */
	while (!(hup && child_done)) {
		struct epoll_event evs[64];
		int n = epoll_wait(s->epoll_fd, evs, 64, SWEEP_MS);
		if (n < 0 && errno != EINTR)
			goto fail;
		pthread_mutex_lock(&s->lock);
		if (s->lane_running && !lane_watched &&
		    atomic_load_explicit(&s->lane_done, memory_order_acquire)) {
			/* the lane stopped on an error of NOTIF_RECV: receive here from now on */
			ev.events = EPOLLIN;
			ev.data.ptr = TAG_NOTIFY;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, s->notify_fd, &ev);
			lane_watched = 1;
		}
		for (int i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;
			if (tag == TAG_NOTIFY) {
				if (evs[i].events & EPOLLIN) {
					struct seccomp_notif req;
					memset(&req, 0, sizeof req);
					/* ENOENT: the task died before we read it; EINTR */
					if (ioctl(s->notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
						rlt_sup_on_notification(s, &req);
				} else if (evs[i].events & (EPOLLHUP | EPOLLERR)) {
					hup = 1;
				}
			} else if (tag == TAG_TIMER) {
				uint64_t x;
				if (read(s->timer_fd, &x, sizeof x) < 0 && errno != EAGAIN)
					goto fail_locked;
				s->timer_armed = 0; /* spent: a deadline equal to it must set it again */
				rlt_sup_jobs_run_due(s);
			} else if (tag == TAG_CHILD) {
				int st;
				if (!child_done && waitpid(s->child, &st, WNOHANG) == s->child) {
					child_done = 1;
					*status = st;
					epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, child_pidfd, NULL);
				}
			} else if (tag == TAG_SIGNAL) {
				forward_signal(s, sig_fd);
			} else if ((uintptr_t)tag & 1) { /* RLT_SUP_JOB_TAG */
				/* a job is stepped by its socket only while parked: the event may
				 * predate an end or a wait the lane gave it since */
				struct rlt_sup_job *j = (struct rlt_sup_job *)((uintptr_t)tag - 1);
				if (j->phase == PH_READY)
					rlt_sup_job_step(s, j);
			} else {
				rlt_sup_proc_gone(s, tag);
			}
		}
		rlt_ns_t now = rlt__now();
		if (s->njobs && now >= s->next_tick)
			rlt_sup_jobs_tick(s); /* sets the next */
		if (now >= next_sweep) {
			rlt_sup_jobs_sweep(s);
			next_sweep = now + SWEEP_MS * 1000000ull;
		}
		rlt_sup_conns_sweep_run(s, now);
		after_events(s);
		rlt_sup_jobs_graveyard_free(s);
		pthread_mutex_unlock(&s->lock);
	}
	goto out;
fail_locked:
	pthread_mutex_unlock(&s->lock);
fail:
	rc = errno ? -errno : -EIO;
	snprintf(err->msg, sizeof err->msg, "the supervisor's event loop failed: %s",
	         strerror(-rc));
out:
	lane_stop(s);
	rlt_sup_jobs_graveyard_free(s);
	return rc;
}
