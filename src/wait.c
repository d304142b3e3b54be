/*
 * wait.c: sleeping for the throttle. Absolute deadlines on CLOCK_MONOTONIC, so that a signal
 * handler that runs in the middle costs nothing: the sleep resumes toward the same instant, and
 * no call ever fails with EINTR because of us.
 */
#include <errno.h>
#include <linux/futex.h>
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

int rlt__sleep_until_intr(rlt_ns_t at)
{
	int saved = errno, rc;
	struct timespec ts = ts_of(at);

	/* clock_nanosleep is never restarted after a handler, SA_RESTART or not: EINTR here
	 * means a handler ran */
	rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	errno = saved;
	return rc == EINTR ? -EINTR : 0;
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
