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

/* not in the freestanding build (RLT_NOLIBC): no C library's thread count there */
#if defined(__x86_64__) && defined(__has_include) && !defined(RLT_NOLIBC)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define RLT_COUNT_PLAIN 1
#endif
#endif

/* Counters back to zero: a fork's child, or counters not yet shared with any thread. */
static inline void rlt__stats_zero(struct rlt__stats *st)
{
	memset(st, 0, sizeof *st);
}

/* Adds s's counters into d's (the sum of several processes): counts add, maxima take the
 * larger; `waiting` and the keys' gauges are of a moment, not added. */
static inline void rlt__stats_fold(struct rlt__stats *d, const struct rlt__stats *s)
{
#define RLT_FOLD(f)                                                                              \
	atomic_fetch_add_explicit(&d->f, atomic_load_explicit(&s->f, memory_order_relaxed),     \
	                          memory_order_relaxed)
	RLT_FOLD(calls);
	RLT_FOLD(allowed);
	RLT_FOLD(delayed);
	RLT_FOLD(rejected);
	RLT_FOLD(units);
	RLT_FOLD(delay_ns_total);
	RLT_FOLD(would_delay);
	RLT_FOLD(would_delay_ns_total);
	RLT_FOLD(would_reject);
#undef RLT_FOLD
	rlt__stat_max(&d->delay_ns_max, atomic_load_explicit(&s->delay_ns_max, memory_order_relaxed));
	rlt__stat_max(&d->would_delay_ns_max,
	              atomic_load_explicit(&s->would_delay_ns_max, memory_order_relaxed));
}

/*
 * Adds v to a counter: a relaxed atomic add, without the lock prefix while the process has
 * one thread (glibc's __libc_single_threaded, which only this thread can turn false, by
 * creating another). One instruction is atomic against a signal handler of the same thread,
 * nobody else writes these counters, and a reader in another process sees the old value or the
 * new. A locked add waits for its line and for every store before it; a plain one goes into
 * the store buffer, and after a system call the counters' line is mostly out of the nearest
 * cache (issue 21).
 */
static inline void rlt__count_add(_Atomic uint64_t *field, uint64_t v)
{
#ifdef RLT_COUNT_PLAIN
	if (__libc_single_threaded) {
		__asm__ volatile("addq %1, %0" : "+m"(*field) : "er"(v));
		return;
	}
#endif
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

/* Rule r let a call go at once and its n units are counted now (t->counted): as
 * rlt__count_admitted(rs, r, 0) and rlt__count_units(rs, r, n), with statistics on (the caller
 * looked), in one step: the conforming call's counting looks at the thread count once. */
static inline void rlt__count_went(struct rlt__rt_rule *r, uint64_t n)
{
	struct rlt__stats *st = r->st;
#ifdef RLT_COUNT_PLAIN
	if (__libc_single_threaded) {
		__asm__ volatile("addq $1, %0\n\taddq $1, %1\n\taddq %3, %2"
		                 : "+m"(st->calls), "+m"(st->allowed), "+m"(st->units)
		                 : "er"(n));
		return;
	}
#endif
	atomic_fetch_add_explicit(&st->calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->allowed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->units, n, memory_order_relaxed);
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
		rlt__count_add(&r->st->would_delay, 1);
		rlt__count_add(&r->st->would_delay_ns_total, waited_ns);
		rlt__stat_max(&r->st->would_delay_ns_max, waited_ns);
	}
	if (would_reject)
		rlt__count_add(&r->st->would_reject, 1);
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
		rlt__count_add(&r->st->units, (uint64_t)0 - n);
}

/* Threads waiting for rule r now (for `rlthrottle top`): d is +1 or -1. Counted only with
 * statistics on, as its caller checks. */
static inline void rlt__count_waiting(struct rlt__rt_rule *r, int d)
{
	rlt__count_add(&r->st->waiting, (uint64_t)(int64_t)d);
}

#endif
