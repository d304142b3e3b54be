/*
 * engine_gcra.c: the token bucket and the leaky bucket, both as GCRA (the generic cell rate
 * algorithm). The whole state is one 64-bit "theoretical arrival time" (TAT) in ticks, moved by
 * compare-and-swap: a conforming call is one CAS, and a reservation is the same CAS, so whoever
 * moves the TAT first is served first (FIFO) without a lock or a queue. Zeroed memory is a valid
 * state ("idle since forever"), which lets the state live in a static array, a per-socket slot
 * or a shared-memory segment alike.
 *
 * Ticks (see rlt_params): a cost converts exactly (cost * ticks_per_unit), and only the clock
 * reading is floored, so rounding never accumulates however many calls are made.
 */
#include <stdatomic.h>

#include "engine.h"
#include "engine_gcra.h"

typedef unsigned __int128 u128;

typedef _Atomic uint64_t tat_t;

/* The first ns whose tick count reaches `ticks`: after the epoch,
 * epoch_ns + ceil((ticks - epoch_ticks) * tick_den / tick_num). */
static rlt_ns_t ns_of(const struct rlt_params *p, uint64_t ticks)
{
	u128 n;

	if (ticks >= p->epoch_ticks) {
		n = ((u128)(ticks - p->epoch_ticks) * p->tick_den + p->tick_num - 1) / p->tick_num +
		    p->epoch_ns;
	} else {
		u128 back = (u128)(p->epoch_ticks - ticks) * p->tick_den / p->tick_num;
		n = back >= p->epoch_ns ? 0 : p->epoch_ns - back;
	}
	return n >= RLT_NS_NEVER ? RLT_NS_NEVER - 1 : (rlt_ns_t)n;
}

uint64_t rlt__gcra_ticks_before(const struct rlt_params *p, rlt_ns_t now)
{
	u128 back = ((u128)(p->epoch_ns - now) * p->tick_num + p->tick_den - 1) / p->tick_den;

	return back >= p->epoch_ticks ? 0 : p->epoch_ticks - (uint64_t)back;
}

uint64_t rlt__gcra_ticks_of(const struct rlt_params *p, rlt_ns_t now)
{
	return rlt__gcra_ticks_at(p, now);
}

rlt_ns_t rlt__gcra_ns_of(const struct rlt_params *p, uint64_t ticks)
{
	return ns_of(p, ticks);
}

/* What a refund of `units` gives back, in ticks: rounded down, never more than was charged
 * (ceil(a) - ceil(b) >= floor(a - b)). RLT_GCRA_TICK_LIMIT (everything) for a refund too large to
 * represent. */
static uint64_t refund_ticks(const struct rlt_params *p, uint64_t units)
{
	if (units > p->max_cost)
		return RLT_GCRA_TICK_LIMIT;
	return (units >> p->unit_shift) * p->ticks_per_unit;
}

static size_t gcra_state_size(const struct rlt_params *p)
{
	(void)p;
	return sizeof(tat_t);
}

static int gcra_init(const struct rlt_params *p, void *state, unsigned flags)
{
	(void)p;
	(void)flags;
	atomic_init((tat_t *)state, 0);
	return 0;
}

static int gcra_copy(const struct rlt_params *p, void *dst, void *src)
{
	(void)p;
	atomic_init((tat_t *)dst, atomic_load_explicit((tat_t *)src, memory_order_acquire));
	return 0;
}

static void gcra_destroy(const struct rlt_params *p, void *state)
{
	(void)p;
	(void)state;
}

/*
 * Settles a decision whose reservation would move the TAT from `old` to `tat_new` and go at
 * tick `go_t`. Returns -1 if the CAS lost a race (the caller reads the state again).
 */
static int settle(const struct rlt_params *p, tat_t *st, uint64_t old, uint64_t tat_new,
                  uint64_t go_t, uint64_t now_t, rlt_ns_t now, enum rlt_mode mode,
                  enum rlt_verdict *v, rlt_ns_t *at)
{
	if (go_t <= now_t) {
		/* Relaxed order is enough: the TAT is the only datum, and a CAS on it is atomic
		 * whatever the order; nothing else is published with it. */
		if (!atomic_compare_exchange_weak_explicit(st, &old, tat_new, memory_order_relaxed,
		                                           memory_order_relaxed))
			return -1;
		*at = now;
		*v = RLT_GO;
		return 0;
	}
	*at = ns_of(p, go_t);
	if (mode == RLT_MODE_NOW || *at - now > p->max_wait_ns) {
		*v = RLT_DENY;
		return 0;
	}
	if (!atomic_compare_exchange_weak_explicit(st, &old, tat_new, memory_order_relaxed,
	                                           memory_order_relaxed))
		return -1;
	*v = RLT_WAIT;
	return 0;
}

/*
 * Token bucket: the call may go once TAT' - tau has come, where TAT' = max(TAT, now) + cost.
 * A cost above the burst is not refused: it waits until the bucket would have filled to it
 * (cost - burst beyond a full bucket) and is charged whole, so a large datagram delays rather
 * than deadlocks, and the long-run rate still holds.
 *
 * Leaky bucket as a meter: calls leave evenly spaced at the rate; a call starts at
 * max(TAT, now) and the next may start `cost` later. The bucket holds what is waiting: a call
 * that finds more than `burst` already ahead of it (TAT - now > tau) overflows and is denied
 * whatever the mode (rlthrottle(7) RULES: rejected even under action=delay).
 */
/* Inlined into each caller so that `leaky` is a constant there: one shared body, no branch
 * on the hot path (measured: a called body costs 4 ns a decision). */
static inline __attribute__((always_inline)) enum rlt_verdict
gcra_decide(const struct rlt_params *p, tat_t *st, rlt_ns_t now, uint64_t cost,
            enum rlt_mode mode, rlt_ns_t *at, int leaky)
{
	uint64_t now_t = rlt__gcra_ticks_at(p, now), c = rlt__gcra_cost_ticks(p, cost);
	enum rlt_verdict v = RLT_DENY;

	if (c == 0 || now_t >= RLT_GCRA_TICK_LIMIT) {
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	}
	for (;;) {
		uint64_t old = atomic_load_explicit(st, memory_order_relaxed);
		uint64_t base = old > now_t ? old : now_t;
		uint64_t go_t;

		if (leaky) {
			if (base - now_t > p->tau) {
				*at = ns_of(p, base - p->tau);
				return RLT_DENY;
			}
			go_t = base;
		} else {
			go_t = base + c > p->tau ? base + c - p->tau : 0;
		}
		if (settle(p, st, old, base + c, go_t, now_t, now, mode, &v, at) == 0)
			return v;
	}
}

rlt_ns_t rlt__gcra_go_at(const struct rlt_params *p, void *state, uint64_t cost)
{
	uint64_t tat = atomic_load_explicit((tat_t *)state, memory_order_relaxed);
	uint64_t c = rlt__gcra_cost_ticks(p, cost);

	if (c == 0)
		return RLT_NS_NEVER;
	if (p->algo == RLT_ALGO_LEAKY)
		return ns_of(p, tat);
	return tat + c > p->tau ? ns_of(p, tat + c - p->tau) : 0;
}

enum rlt_verdict rlt__token_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                   uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	return gcra_decide(p, state, now, cost, mode, at, 0);
}

static enum rlt_verdict leaky_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                     uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	return gcra_decide(p, state, now, cost, mode, at, 1);
}

/*
 * Gives back unused units by moving the TAT back. This is safe whoever reserved after us: the
 * admissions that follow are exactly those of a history in which this call had reserved only
 * what it used, and later calls already placed only went later than they needed to.
 */
static void gcra_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units)
{
	tat_t *st = state;
	uint64_t c = refund_ticks(p, units);
	uint64_t old = atomic_load_explicit(st, memory_order_relaxed);

	(void)at;
	if (c == 0)
		return; /* less than a tick */
	for (;;) {
		uint64_t tat_new = old > c ? old - c : 0;
		if (atomic_compare_exchange_weak_explicit(st, &old, tat_new, memory_order_relaxed,
		                                          memory_order_relaxed))
			return;
	}
}

static uint64_t token_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	uint64_t now_t = rlt__gcra_ticks_at(p, now);
	uint64_t tat = atomic_load_explicit((tat_t *)state, memory_order_relaxed);
	uint64_t base = tat > now_t ? tat : now_t;
	uint64_t room = now_t + p->tau > base ? now_t + p->tau - base : 0;

	if (p->unit_shift)
		return room > (UINT64_MAX >> p->unit_shift) ? UINT64_MAX : room << p->unit_shift;
	return room / p->ticks_per_unit;
}

/* A leaky bucket passes a call now only when nothing is ahead of it; how much the call may
 * carry is then the burst. */
static uint64_t leaky_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	uint64_t tat = atomic_load_explicit((tat_t *)state, memory_order_relaxed);

	return tat > rlt__gcra_ticks_at(p, now) ? 0 : p->burst;
}

const struct rlt__engine_ops rlt__engine_token = {
	.state_size = gcra_state_size,
	.init = gcra_init,
	.destroy = gcra_destroy,
	.copy = gcra_copy,
	.decide = rlt__token_decide,
	.refund = gcra_refund,
	.available = token_available,
};

const struct rlt__engine_ops rlt__engine_leaky = {
	.state_size = gcra_state_size,
	.init = gcra_init,
	.destroy = gcra_destroy,
	.copy = gcra_copy,
	.decide = leaky_decide,
	.refund = gcra_refund,
	.available = leaky_available,
};
