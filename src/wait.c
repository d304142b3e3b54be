/*
 * wait.c: sleeping for the throttle. Absolute deadlines on CLOCK_MONOTONIC, so that a signal
 * handler that runs in the middle costs nothing: the sleep resumes toward the same instant, and
 * no call ever fails with EINTR because of us.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "wait.h"

static struct timespec ts_of(rlt_ns_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / RLT_NS_PER_SEC),
		.tv_nsec = (long)(t % RLT_NS_PER_SEC),
	};
	return ts;
}

void rlt__sleep_until(rlt_ns_t at)
{
	int saved = errno;
	struct timespec ts = ts_of(at);

	/* clock_nanosleep returns the error instead of setting errno; bounded: each EINTR is one
	 * signal delivered, and the deadline does not move. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	errno = saved;
}

/* The kernel's signal set is 64 bits (rt_sigprocmask and ppoll take its size). */
#define KSET_SIZE 8

void rlt__intr_begin(struct rlt__intr_wait *w)
{
	uint64_t all = ~0ull;

	w->old = 0;
	/* raw system calls: the wrappers' sets are glibc's 1024-bit ones */
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &w->old, KSET_SIZE);
}

int rlt__intr_sleep(struct rlt__intr_wait *w, rlt_ns_t at)
{
	int saved = errno;
	rlt_ns_t now = rlt__now();
	rlt_ns_t left = at > now ? at - now : 0;
	struct timespec ts = ts_of(left);
	long rc = syscall(SYS_ppoll, NULL, 0, &ts, &w->old, KSET_SIZE);
	int intr = rc < 0 && errno == EINTR;

	errno = saved;
	return intr ? -EINTR : 0;
}

int rlt__intr_end(struct rlt__intr_wait *w)
{
	int saved = errno, ran = 0;
	uint64_t pending = 0;

	if (syscall(SYS_rt_sigpending, &pending, KSET_SIZE) == 0) {
		pending &= ~w->old;
		/* a pending signal the thread lets in runs its handler at the restore below; one
		 * with no handler (ignored, or a default that ignores) ends nothing */
		for (int sig = 1; sig <= 64 && pending; sig++) {
			struct sigaction sa;
			if (!(pending & (1ull << (sig - 1))))
				continue;
			pending &= ~(1ull << (sig - 1));
			if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
			    sa.sa_handler != SIG_IGN)
				ran = 1;
		}
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &w->old, NULL, KSET_SIZE);
	errno = saved;
	return ran;
}

int rlt__wait_change(_Atomic uint32_t *word, uint32_t val, rlt_ns_t deadline, int shared)
{
	int saved = errno, rc = 0;
	int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);

	while (atomic_load(word) == val) {
		struct timespec ts = ts_of(deadline);
		if (deadline != RLT_NS_NEVER && rlt__now() >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
		if (syscall(SYS_futex, word, op, val, deadline == RLT_NS_NEVER ? NULL : &ts, NULL,
		            FUTEX_BITSET_MATCH_ANY) == -1 &&
		    errno == ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	errno = saved;
	return rc;
}

void rlt__wake_all(_Atomic uint32_t *word, int shared)
{
	int saved = errno;
	syscall(SYS_futex, word, FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG), INT32_MAX, NULL,
	        NULL, 0);
	errno = saved;
}
