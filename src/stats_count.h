/*
 * stats_count.h: the one place a rule's RLT_STATS counters move, for every decision of either
 * front (a charge, its settle, an RLT_CONNS slot), so that a call counts the same wherever it
 * is decided. Relaxed atomics, and nothing when statistics are off: a hook's hot path pays one
 * load of rs->stats_on. The counters themselves are struct rlt__stats (policy.h), in the
 * process's published page when it has one (publish.c), so `rlthrottle top` reads them live.
 */
#ifndef RLT_STATS_COUNT_H
#define RLT_STATS_COUNT_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "policy.h"

/* Counters back to zero: a fork's child, or counters not yet shared with any thread. */
static inline void rlt__stats_zero(struct rlt__stats *st)
{
	memset(st, 0, sizeof *st);
}

static inline void rlt__count_add(_Atomic uint64_t *field, uint64_t v)
{
	atomic_fetch_add_explicit(field, v, memory_order_relaxed);
}

/* Rule r let a call go, at once (waited_ns 0) or after waiting waited_ns. */
static inline void rlt__count_admitted(const struct rlt__ruleset *rs, struct rlt__rt_rule *r,
                                       uint64_t waited_ns)
{
	if (!rs->stats_on)
		return;
	rlt__count_add(&r->st->calls, 1);
	rlt__count_add(&r->st->allowed, 1);
	if (waited_ns) {
		rlt__count_add(&r->st->delayed, 1);
		rlt__count_add(&r->st->delay_ns_total, waited_ns);
		rlt__stat_max(&r->st->delay_ns_max, waited_ns);
	}
}

/* Dry-run rule r let a call go at once; delay would have made it wait waited_ns (its part of
 * the delay: see charge.c), and reject would have refused it when would_reject. */
static inline void rlt__count_dry(const struct rlt__ruleset *rs, struct rlt__rt_rule *r,
                                  uint64_t waited_ns, int would_reject)
{
	if (!rs->stats_on)
		return;
	rlt__count_add(&r->st->calls, 1);
	rlt__count_add(&r->st->allowed, 1);
	if (waited_ns) {
		rlt__count_add(&r->st->delayed, 1);
		rlt__count_add(&r->st->delay_ns_total, waited_ns);
		rlt__stat_max(&r->st->delay_ns_max, waited_ns);
	}
	if (would_reject)
		rlt__count_add(&r->st->rejected, 1);
}

/* Rule r failed a call. */
static inline void rlt__count_rejected(const struct rlt__ruleset *rs, struct rlt__rt_rule *r)
{
	if (!rs->stats_on)
		return;
	rlt__count_add(&r->st->calls, 1);
	rlt__count_add(&r->st->rejected, 1);
}

/* Rule r was finally charged n units (after refunds). */
static inline void rlt__count_units(const struct rlt__ruleset *rs, const struct rlt__rt_rule *r,
                                    uint64_t n)
{
	if (rs->stats_on)
		rlt__count_add(&r->st->units, n);
}

/* Units counted when they were charged, which the call did not use after all (a short
 * write, an error): n of them go back. */
static inline void rlt__count_units_back(const struct rlt__ruleset *rs,
                                         const struct rlt__rt_rule *r, uint64_t n)
{
	if (rs->stats_on && n)
		atomic_fetch_sub_explicit(&r->st->units, n, memory_order_relaxed);
}

/* Threads waiting for rule r now (for `rlthrottle top`): d is +1 or -1. Counted only with
 * statistics on, as its caller checks. */
static inline void rlt__count_waiting(struct rlt__rt_rule *r, int d)
{
	rlt__count_add(&r->st->waiting, (uint64_t)(int64_t)d);
}

#endif
