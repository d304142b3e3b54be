/* wait.h: how a delayed call waits: asleep, never spinning, resumed after signal handlers. */
#ifndef RLT_WAIT_H
#define RLT_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "rlthrottle.h"

/* Sleeps until CLOCK_MONOTONIC reaches `at`. A signal runs its handler and the sleep goes on. */
void rlt__sleep_until(rlt_ns_t at);

/*
 * A wait in several sleeps that a signal handler ends, whenever the signal comes: between the
 * sleeps (a set's refresh, the clock read) signals are held, and each sleep (ppoll) lets them
 * in for its length, so that one that comes between two sleeps waits for the next, or is found
 * pending at the end. Without this a handler that ran between two sleeps would go unnoticed
 * and the call would go on to its end. The thread's own mask is back after rlt__intr_end.
 */
struct rlt__intr_wait {
	uint64_t old; /* the thread's signal mask (the kernel's 64-bit set) */
};
void rlt__intr_begin(struct rlt__intr_wait *w);
/* Sleeps until `at`: -EINTR when a handler ran meanwhile, else 0. */
int rlt__intr_sleep(struct rlt__intr_wait *w, rlt_ns_t at);
/* The thread's mask back: 1 when a signal came after the last sleep whose handler runs now
 * (so the wait counts as ended by it), else 0. */
int rlt__intr_end(struct rlt__intr_wait *w);

/* Sleeps while *word == val, until woken by rlt__wake_all(word) or CLOCK_MONOTONIC reaches
 * `deadline` (RLT_NS_NEVER: no deadline). Returns 0 when woken or the value changed, -ETIMEDOUT
 * past the deadline. `shared`: the word lives in memory shared between processes. */
int rlt__wait_change(_Atomic uint32_t *word, uint32_t val, rlt_ns_t deadline, int shared);
void rlt__wake_all(_Atomic uint32_t *word, int shared);

#endif
