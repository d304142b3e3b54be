/*
 * ready.h: when a socket's direction may proceed, for the waits of both fronts (poll, select:
 * preload/hook_poll.c; epoll: hook_epoll.c). A wait reports a throttled socket ready only when
 * the call it announces would go without waiting for its budget, so that a program's own deadline holds:
 * the wait ends by its timeout, and the call that follows does not sleep past it.
 *
 * One question, "not ready before T": rlt__ready_at answers it for the budgets; anything else
 * that holds a socket back (the network conditions' delayed data) answers the same question
 * and the front takes the later of the answers (rlt__ready_later). Pure: `now` comes in; no
 * clock, no sleep, no system call.
 */
#ifndef RLT_READY_H
#define RLT_READY_H

#include <stdint.h>

#include "clock.h"
#include "policy.h"

/*
 * When a call of var (RLT_VAR_SEND or RLT_VAR_RECV) under `mask` on a socket may go without
 * waiting for its budget: `now` (or earlier) when it may now, else the earliest time it may
 * (an estimate that is never later than the budget allows for a rule of the token bucket and
 * the fixed window; the front asks again then). What a call must find: a piece for a send
 * (what a non-blocking send takes at the least), half a piece for a receive (below that one
 * waits for a whole piece: src/pacing.c), one unit for a rule that counts messages. Only
 * delay rules hold a socket back: a reject or dry-run rule never makes a call wait.
 */
rlt_ns_t rlt__ready_at(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                       void *conn_block, const struct rlt__peer *peer, rlt_ns_t now);

/* The later of two "not before" times. */
static inline rlt_ns_t rlt__ready_later(rlt_ns_t a, rlt_ns_t b)
{
	return a > b ? a : b;
}

#endif
