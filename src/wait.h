/* wait.h: how a delayed call waits: asleep, never spinning, resumed after signal handlers. */
#ifndef RLT_WAIT_H
#define RLT_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "rlthrottle.h"

/* Sleeps until CLOCK_MONOTONIC reaches `at`. A signal runs its handler and the sleep goes on. */
void rlt__sleep_until(rlt_ns_t at);
/* The same, but a signal handler that runs ends the sleep: -EINTR then, 0 at `at`. For a call
 * that already moved data and returns that count at a signal, as the kernel's would. */
int rlt__sleep_until_intr(rlt_ns_t at);

/* Sleeps while *word == val, until woken by rlt__wake_all(word) or CLOCK_MONOTONIC reaches
 * `deadline` (RLT_NS_NEVER: no deadline). Returns 0 when woken or the value changed, -ETIMEDOUT
 * past the deadline. `shared`: the word lives in memory shared between processes. */
int rlt__wait_change(_Atomic uint32_t *word, uint32_t val, rlt_ns_t deadline, int shared);
void rlt__wake_all(_Atomic uint32_t *word, int shared);

#endif
