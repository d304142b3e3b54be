/*
 * engine_log.c: the sliding log, exact. Every admitted call leaves an entry (time, units) in a
 * ring, and a call conforms at t if the units of the entries with a time in (t - window, t],
 * plus its own, are at most the limit. Entries are appended in time order (FIFO: a reservation
 * goes no earlier than the last entry), so the entries that have left the period are always a
 * prefix of the ring and are dropped from its head, and a running total of the rest makes a
 * decision cost the entries it drops, not the limit.
 *
 * The state holds no pointer (absolute indices into the ring that follows the header), so that
 * it works the same in process memory and in a shared-memory segment mapped at any address.
 * Its lock is held for one decision only. A call nested in its own thread's decision (a signal
 * handler) is admitted at once and recorded by the next decision (engine_lock.h, RLT_LOCK_SELF): the
 * one place where the log is not exact, by that call's units.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "engine_lock.h"

struct log_entry {
	uint64_t t; /* when the call (or reservation) goes, ns */
	uint64_t n; /* units it took; a refund may bring it down to 0 */
};

struct log_state {
	struct rlt__lock lock; /* held for one decision (engine_lock.h) */
	uint64_t begin;        /* absolute index of the oldest entry; the slot is begin % capacity */
	uint64_t end;          /* absolute index one past the newest entry */
	uint64_t total;        /* sum of n over [begin, end); rebuilt after a holder died */
	uint64_t hw;           /* the latest `now` seen: a stale reading is moved up to it */
	struct log_entry e[];  /* the ring: `limit` entries when made (log_cap) */
};

/* The ring's size: the limit it was made for. A set (rlt_params_retune) may lower the limit
 * and raise it again up to this, never above: the state is shared by the calls that still
 * decide under the old params and the ones under the new, so its layout cannot change. */
static uint64_t log_cap(const struct rlt_params *p)
{
	return p->epoch_ticks ? p->epoch_ticks : p->limit;
}

/*
 * Why a ring of `limit` entries is enough: every live entry took at least one unit (a refund
 * to 0 aside, see log_compact) and the live entries hold at most `limit` units; entries with
 * the same time are merged, so times in the ring strictly increase.
 */

static size_t log_state_size(const struct rlt_params *p)
{
	uint64_t L = log_cap(p) <= RLT_LOG_MAX_LIMIT ? log_cap(p) : 0;

	return offsetof(struct log_state, e) + (size_t)L * sizeof(struct log_entry);
}

static int log_init(const struct rlt_params *p, void *state, unsigned flags)
{
	struct log_state *st = state;

	if (p->limit == 0 || log_cap(p) > RLT_LOG_MAX_LIMIT || p->limit > log_cap(p) ||
	    p->window_ns == 0)
		return -EINVAL;
	memset(st, 0, offsetof(struct log_state, e));
	return rlt__lock_init(&st->lock, flags);
}

static void log_destroy(const struct rlt_params *p, void *state)
{
	(void)p;
	rlt__lock_destroy(&((struct log_state *)state)->lock);
}


static struct log_entry *log_at(struct log_state *st, uint64_t L, uint64_t i)
{
	return &st->e[i % L];
}

/*
 * After a holder died with the lock (or was left behind by a fork). Every update is ordered so
 * that each prefix of it leaves the entries valid (an entry is written before `end` takes it
 * in, `begin` moves before anything else), only the derived total can be off: it is counted
 * again.
 */
static void log_repair(struct log_state *st, uint64_t L)
{
	uint64_t i, sum = 0;

	if (st->end < st->begin || st->end - st->begin > L)
		st->begin = st->end = 0;
	for (i = st->begin; i != st->end; i++)
		sum += log_at(st, L, i)->n;
	st->total = sum;
}

/* RLT_LOCK_HELD (repaired first if the holder was gone), RLT_LOCK_SELF, or anything else when
 * the lock could not be had (never with a valid state). */
static int log_lock(struct log_state *st, uint64_t L)
{
	int rc = rlt__lock_take(&st->lock);

	if (rc == RLT_LOCK_RECOVERED) {
		log_repair(st, L);
		rc = RLT_LOCK_HELD;
	}
	return rc;
}

/* A lock is never copied: dst gets its own, then the counts, the ring and what nested calls
 * left pending, read under src's. */
static int log_copy(const struct rlt_params *p, void *dst, void *src)
{
	struct log_state *d = dst, *s = src;
	int rc = log_init(p, d, 0);

	if (rc)
		return rc;
	if (log_lock(s, log_cap(p)) != RLT_LOCK_HELD) {
		log_destroy(p, d);
		return -EBUSY;
	}
	memcpy((char *)d + offsetof(struct log_state, begin),
	       (char *)s + offsetof(struct log_state, begin),
	       log_state_size(p) - offsetof(struct log_state, begin));
	atomic_store_explicit(&d->lock.pending, rlt__lock_pending(&s->lock), memory_order_relaxed);
	rlt__lock_release(&s->lock);
	return 0;
}

/*
 * Drops the entries that have left the period at t (time <= t - W). Only done for a t that
 * every later decision looks at or after, since those entries would count again earlier.
 */
static void log_expire(struct log_state *st, uint64_t L, uint64_t W, rlt_ns_t t)
{
	if (t < W)
		return;
	while (st->begin != st->end) {
		struct log_entry *e = log_at(st, L, st->begin);

		if (e->t > t - W)
			break;
		st->begin++;
		atomic_signal_fence(memory_order_seq_cst);
		st->total -= e->n;
	}
}

/*
 * The earliest t >= cand at which `cost` conforms (cost <= L), or RLT_NS_NEVER. The entries
 * all lie at or before cand; the oldest ones leave the period first, at their time + W, so
 * the walk stops at the entry whose leaving frees enough units: at most `cost` entries (plus
 * any refunded to 0).
 */
static rlt_ns_t log_earliest(struct log_state *st, uint64_t C, uint64_t L, uint64_t W,
                             rlt_ns_t cand, uint64_t cost)
{
	uint64_t need, freed = 0, i;

	if (st->total + cost <= L)
		return cand;
	need = st->total + cost - L;
	for (i = st->begin; i != st->end; i++) {
		const struct log_entry *e = log_at(st, C, i);

		freed += e->n;
		if (freed >= need) {
			if (e->t > RLT_NS_NEVER - 1 - W)
				return RLT_NS_NEVER;
			return e->t + W > cand ? e->t + W : cand;
		}
	}
	return RLT_NS_NEVER; /* unreachable while total is the sum of the entries */
}

/*
 * Makes room in a full ring by dropping entries refunded to 0. It moves entries towards the
 * tail and moves `begin` last, so a process dying halfway leaves some entries twice (stricter,
 * never looser) and the times still in order.
 */
static void log_compact(struct log_state *st, uint64_t L)
{
	uint64_t w = st->end, i = st->end;

	while (i != st->begin) {
		i--;
		if (log_at(st, L, i)->n != 0) {
			w--;
			if (w != i)
				*log_at(st, L, w) = *log_at(st, L, i);
		}
	}
	atomic_signal_fence(memory_order_seq_cst);
	st->begin = w;
}

/* Appends (t, cost), t at or after the last entry; returns -1 if there is no room (which the
 * invariant rules out). */
static int log_append(struct log_state *st, uint64_t L, rlt_ns_t t, uint64_t cost)
{
	struct log_entry *e;

	if (st->begin != st->end && (e = log_at(st, L, st->end - 1))->t == t) {
		e->n += cost;
	} else {
		if (st->end - st->begin == L)
			log_compact(st, L);
		if (st->end - st->begin == L)
			return -1;
		e = log_at(st, L, st->end);
		e->t = t;
		e->n = cost;
		atomic_signal_fence(memory_order_seq_cst);
		st->end++;
	}
	atomic_signal_fence(memory_order_seq_cst);
	st->total += cost;
	return 0;
}

/*
 * Records what nested calls took (they went already) at cand, the latest time in the log:
 * merged into the newest entry, or as the first one. Merging needs no room in the ring, and
 * the total may then pass L for a while: later calls wait until enough has left the period.
 */
static void log_fold_nested(struct log_state *st, uint64_t L, rlt_ns_t cand)
{
	uint64_t nested = rlt__lock_pending(&st->lock);

	if (!nested)
		return;
	if (st->begin != st->end) {
		log_at(st, L, st->end - 1)->n += nested;
		atomic_signal_fence(memory_order_seq_cst);
		st->total += nested;
	} else if (log_append(st, L, cand, nested) != 0) {
		return; /* unreachable: an empty ring has room */
	}
	rlt__lock_pending_done(&st->lock, nested);
}

static enum rlt_verdict log_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                   uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	struct log_state *st = state;
	uint64_t L = p->limit, C = log_cap(p), W = p->window_ns;
	enum rlt_verdict v = RLT_DENY;
	rlt_ns_t t0, cand, t;
	int rc;

	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	/* A cost above the limit never conforms: no period can hold it. Unlike the windows it
	 * is refused rather than charged whole, because the log is exact by contract. */
	if (L == 0 || C > RLT_LOG_MAX_LIMIT || W == 0 || cost > L) {
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	}
	rc = log_lock(st, C);
	if (rc != RLT_LOCK_HELD)
		return rlt__lock_not_held(&st->lock, rc, now, cost, at);
	/* Threads read the clock before they queue for the lock: a reading older than one
	 * already decided on is moved up to that one, which has certainly come. */
	t0 = now > st->hw ? now : st->hw;
	st->hw = t0;
	log_expire(st, C, W, t0);
	cand = t0;
	if (st->begin != st->end && log_at(st, C, st->end - 1)->t > cand)
		cand = log_at(st, C, st->end - 1)->t;
	log_fold_nested(st, C, cand);
	t = log_earliest(st, C, L, W, cand, cost);
	if (t != RLT_NS_NEVER &&
	    (mode == RLT_MODE_NOW ? t == t0 : t - now <= p->max_wait_ns)) {
		/* Every later decision looks at t or after (FIFO), so what has left the period
		 * by t can go now. */
		log_expire(st, C, W, t);
		if (log_append(st, C, t, cost) == 0)
			v = t == t0 ? RLT_GO : RLT_WAIT;
		else
			t = RLT_NS_NEVER;
	}
	rlt__lock_release(&st->lock);
	/* A GO reports t0, the time it was logged at, so that a refund finds its entry. */
	*at = t;
	return v;
}

/* Finds the entry logged at `at` (times strictly increase) and takes units off it. */
static void log_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units)
{
	struct log_state *st = state;
	uint64_t L = p->limit, C = log_cap(p), lo, hi, d;
	struct log_entry *e;
	int rc;

	if (units == 0 || L == 0 || C > RLT_LOG_MAX_LIMIT)
		return;
	rc = log_lock(st, C);
	if (rc == RLT_LOCK_SELF) {
		/* a nested call's refund: its units are still pending */
		rlt__lock_pending_refund(&st->lock, units);
		return;
	}
	if (rc != RLT_LOCK_HELD)
		return;
	lo = st->begin;
	hi = st->end;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (log_at(st, C, mid)->t < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo != st->end && (e = log_at(st, C, lo))->t == at) {
		d = e->n < units ? e->n : units;
		e->n -= d;
		atomic_signal_fence(memory_order_seq_cst);
		st->total -= d;
		/* An emptied oldest entry goes at once. The newest one stays even when emptied:
		 * its time is where the next call queues, and entries that had left the period by
		 * then may already be gone, so letting a call go earlier could break the limit. */
		if (e->n == 0 && lo == st->begin && lo != st->end - 1)
			st->begin++;
	}
	rlt__lock_release(&st->lock);
}

static uint64_t log_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	struct log_state *st = state;
	uint64_t L = p->limit, C = log_cap(p), W = p->window_ns, avail = 0;

	/* nested in the holder's decision (RLT_LOCK_SELF): 0, which sizes no call up */
	if (L == 0 || C > RLT_LOG_MAX_LIMIT || W == 0 || log_lock(st, C) != RLT_LOCK_HELD)
		return 0;
	if (now < st->hw)
		now = st->hw;
	st->hw = now;
	log_expire(st, C, W, now);
	log_fold_nested(st, C, st->begin != st->end && log_at(st, C, st->end - 1)->t > now
	                               ? log_at(st, C, st->end - 1)->t
	                               : now);
	if (st->begin == st->end || log_at(st, C, st->end - 1)->t <= now)
		avail = st->total < L ? L - st->total : 0;
	rlt__lock_release(&st->lock);
	return avail;
}

const struct rlt__engine_ops rlt__engine_sliding_log = {
	.state_size = log_state_size,
	.init = log_init,
	.destroy = log_destroy,
	.copy = log_copy,
	.decide = log_decide,
	.refund = log_refund,
	.available = log_available,
};
