/*
 * engine_gcra.h: the token bucket's clock reading in ticks, a cost in ticks, and its decision
 * for a call that conforms now, inline: engine_gcra.c decides with them, and the charge's
 * short way (charge.c) inlines the last, a conforming call's whole decision (issue 21). Pure,
 * as every engine: params, state, now and cost in.
 */
#ifndef RLT_ENGINE_GCRA_H
#define RLT_ENGINE_GCRA_H

#include <stdatomic.h>
#include <stdint.h>

#include "rlthrottle.h"

#define RLT_GCRA_TICK_LIMIT (1ull << 62)

/* A clock reading from before a set took effect (read before the new params were seen): the
 * ticks count back from the epoch, rounded down as forward. Not the hot path. */
uint64_t rlt__gcra_ticks_before(const struct rlt_params *p, rlt_ns_t now);

/*
 * floor(d * tick_num / tick_den), exactly, without a division: tick_recip holds
 * tick_num / tick_den with 59 fraction bits, rounded down, so the product falls short by less
 * than 2 ticks for any d below 2^60 ns (36 years); the loop adds them back, each step checked
 * against the exact fraction with 64-by-64 multiplications.
 */
static inline uint64_t rlt__gcra_ticks_in(const struct rlt_params *p, rlt_ns_t d)
{
	uint64_t t = (uint64_t)(((unsigned __int128)d * p->tick_recip) >> 59);
	unsigned __int128 exact = (unsigned __int128)d * p->tick_num;

	while ((unsigned __int128)(t + 1) * p->tick_den <= exact)
		t++;
	return t;
}

/* The tick count at `now`: ticks_in since the epoch (0 until a set) added to the epoch's,
 * saturating at RLT_GCRA_TICK_LIMIT. Inlined into every caller: a decision is on every call's path,
 * and a call of its own there costs more than its few instructions (issue 21). */
static inline __attribute__((always_inline)) uint64_t rlt__gcra_ticks_at(const struct rlt_params *p,
                                                                     rlt_ns_t now)
{
	if (now >= (1ull << 60))
		return RLT_GCRA_TICK_LIMIT;
	if (__builtin_expect(now < p->epoch_ns, 0))
		return rlt__gcra_ticks_before(p, now);
	/* no wrap: at most 16 ticks per ns since the epoch and before it (rlt_params_retune), so
	 * the sum stays below 16 * now < 2^64 */
	uint64_t t = rlt__gcra_ticks_in(p, now - p->epoch_ns) + p->epoch_ticks;
	return t >= RLT_GCRA_TICK_LIMIT ? RLT_GCRA_TICK_LIMIT : t;
}

/* cost in ticks, or 0 when it cannot be represented (it could never be waited out anyway:
 * 2^62 ticks are at least 9 years). Above 16 units per ns a tick holds 2^unit_shift units and a
 * cost is rounded up to whole ticks (ticks_per_unit is then 1); below, the shift is 0. */
static inline uint64_t rlt__gcra_cost_ticks(const struct rlt_params *p, uint64_t cost)
{
	if (cost > p->max_cost)
		return 0;
	return ((cost + p->unit_round) >> p->unit_shift) * p->ticks_per_unit;
}

/*
 * The token bucket's decision when the call conforms now: exactly what gcra_decide does then
 * (TAT' = max(TAT, now) + cost by one CAS, the call going at `now`), and nothing else. 0 when
 * it does not conform now, or its cost cannot be represented: nothing is taken then, and the
 * caller decides the whole way (rlt__token_decide), which finds the state as this left it.
 * A leaf, without the wait's arithmetic: the conforming call's decision.
 */
static inline int rlt__token_take_now(const struct rlt_params *p, void *state, rlt_ns_t now,
                                      uint64_t cost)
{
	_Atomic uint64_t *st = state;
	uint64_t now_t = rlt__gcra_ticks_at(p, now), c = rlt__gcra_cost_ticks(p, cost);
	uint64_t old = atomic_load_explicit(st, memory_order_relaxed);

	if (c == 0 || now_t >= RLT_GCRA_TICK_LIMIT)
		return 0;
	for (;;) {
		uint64_t base = old > now_t ? old : now_t;
		if (base + c > p->tau && base + c - p->tau > now_t)
			return 0; /* it would wait */
		/* relaxed, as settle's: the TAT is the only datum */
		if (atomic_compare_exchange_weak_explicit(st, &old, base + c, memory_order_relaxed,
		                                          memory_order_relaxed))
			return 1;
	}
}

#endif
