/*
 * engine_window.c: the fixed window and the sliding window.
 *
 * Fixed window: lock-free, one 64-bit word. The word is a monotone "position" in units: window w
 * (now / window_ns) owns the positions [w*L, (w+1)*L), L = limit, and a call takes the next free
 * positions of the earliest window that can hold it. A call therefore conforms in window w only
 * while positions of w are left, so no window admits more than L, and a reservation is the same
 * compare-and-swap as a conforming call: whoever moves the position first is served first (FIFO).
 * Zeroed memory is a valid state.
 *
 * Sliding window: ten sub-window counters and the oldest one weighed by the part of it still
 * inside the period (rlthrottle(7) RULES). It takes a lock (the counters move together), held for the
 * decision alone; zeroed memory is not a valid state, rlt_state_init() must run first. A call
 * nested in its own thread's decision (a signal handler) is admitted at once and recorded by
 * the next decision (engine_lock.h, RLT_LOCK_SELF).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "engine.h"
#include "engine_lock.h"

typedef unsigned __int128 u128;

/* ---------------------------------------------------------------------------------------------
 * Fixed window
 * ------------------------------------------------------------------------------------------- */

struct fw_state {
	_Atomic uint64_t pos; /* next free position, in units; window w owns [w*L, (w+1)*L) */
};

static size_t fw_state_size(const struct rlt_params *p)
{
	(void)p;
	return sizeof(struct fw_state);
}

static int fw_init(const struct rlt_params *p, void *state, unsigned flags)
{
	(void)p;
	(void)flags;
	atomic_init(&((struct fw_state *)state)->pos, 0);
	return 0;
}

static void fw_destroy(const struct rlt_params *p, void *state)
{
	(void)p;
	(void)state;
}

static int fw_copy(const struct rlt_params *p, void *dst, void *src)
{
	(void)p;
	atomic_init(&((struct fw_state *)dst)->pos,
	            atomic_load_explicit(&((struct fw_state *)src)->pos, memory_order_acquire));
	return 0;
}

/*
 * Where a call of cost c starts when the word reads s and the current window is w: the first
 * free position of window w or later, moved to the next window boundary if the call would not
 * fit in what is left of its window. A cost above L cannot fit in any one window: it starts at
 * a boundary and takes ceil(c/L) windows' positions, going when the first of them begins (so a
 * large datagram is delayed, not refused forever, and the long-run rate still holds). Returns
 * -1 when the positions would pass 2^64 (a clock centuries on at a high rate): the caller
 * refuses rather than wraps.
 */
static int fw_place(uint64_t L, uint64_t s, uint64_t w, uint64_t c, uint64_t *start)
{
	uint64_t pos, off;

	if (w > UINT64_MAX / L)
		return -1;
	pos = w * L;
	if (s > pos)
		pos = s;
	off = pos % L;
	if (off != 0 && c > L - off) {
		if (pos > UINT64_MAX - (L - off))
			return -1;
		pos += L - off;
	}
	if (pos > UINT64_MAX - c)
		return -1;
	*start = pos;
	return 0;
}

static enum rlt_verdict fw_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                  uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	struct fw_state *st = state;
	uint64_t L = p->limit, W = p->window_ns, s, start, k;
	rlt_ns_t go;

	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	if (L == 0 || W == 0) {
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	}
	s = atomic_load_explicit(&st->pos, memory_order_relaxed);
	for (;;) {
		if (fw_place(L, s, now / W, cost, &start) != 0) {
			*at = RLT_NS_NEVER;
			return RLT_DENY;
		}
		k = start / L;
		if (k > (RLT_NS_NEVER - 1) / W) {
			*at = RLT_NS_NEVER;
			return RLT_DENY;
		}
		/* The window the call lands in is the current one (go now) or a later one (go at
		 * its start). */
		go = k * W;
		if (go < now)
			go = now;
		if (mode == RLT_MODE_NOW ? go != now : go - now > p->max_wait_ns) {
			*at = go;
			return RLT_DENY;
		}
		/* Relaxed order is enough: the position is the only datum and nothing else is
		 * published with it. A failed CAS reloads s and places the call again. */
		if (atomic_compare_exchange_weak_explicit(&st->pos, &s, start + cost,
		                                          memory_order_relaxed, memory_order_relaxed))
			break;
	}
	*at = go;
	return go == now ? RLT_GO : RLT_WAIT;
}

/*
 * Gives units back only while the word still lies in the refunded call's window. Across a
 * boundary it does nothing, on purpose: calls queued after it in the next window were placed
 * (pushed to the boundary) assuming the larger cost, so moving the word back below the boundary
 * would let later calls take positions of the old window while the queued ones keep theirs in
 * the new one, and the next window could pass L. Within one window every later call goes at
 * the same time anyway, so giving the positions back only lets more fit in that window, never
 * more than L. A call larger than L ends in a later window and so is never refunded.
 */
static void fw_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units)
{
	struct fw_state *st = state;
	uint64_t L = p->limit, W = p->window_ns, k, lo, s, next;

	if (units == 0 || L == 0 || W == 0)
		return;
	k = at / W;
	if (k > UINT64_MAX / L)
		return;
	lo = k * L;
	s = atomic_load_explicit(&st->pos, memory_order_relaxed);
	do {
		if (s == 0 || (s - 1) / L != k)
			return;
		next = s - lo < units ? lo : s - units;
	} while (!atomic_compare_exchange_weak_explicit(&st->pos, &s, next, memory_order_relaxed,
	                                                memory_order_relaxed));
}

static uint64_t fw_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	struct fw_state *st = state;
	uint64_t L = p->limit, W = p->window_ns, w, lo, s;

	if (L == 0 || W == 0)
		return 0;
	w = now / W;
	if (w >= UINT64_MAX / L)
		return 0;
	lo = w * L;
	s = atomic_load_explicit(&st->pos, memory_order_relaxed);
	if (s < lo)
		s = lo;
	return s >= lo + L ? 0 : lo + L - s;
}

/*
 * The word is laid out for one limit, so a new limit gets a word of its own, placed so that
 * the last window holding positions (the current one, or a later one that reservations
 * reached) keeps its count, judged against the new limit: a count at or above it fills the
 * window, and nothing more goes until the next. Windows in between were filled by calls
 * already waiting for them, which keep their go times.
 */
int rlt__fw_carry(const struct rlt_params *old, void *old_state, const struct rlt_params *np,
                  void *new_state, rlt_ns_t since)
{
	uint64_t L = old->limit, Ln = np->limit, W = old->window_ns, w, s;
	u128 lo, pos, k, e;

	if (L == 0 || Ln == 0 || W == 0 || np->window_ns != W)
		return -EINVAL;
	s = atomic_load_explicit(&((struct fw_state *)old_state)->pos, memory_order_acquire);
	w = since / W;
	lo = (u128)w * L;
	if (s <= lo) {
		pos = (u128)w * Ln;
	} else {
		k = w + (s - lo - 1) / L; /* the window of the last position taken */
		e = s - (u128)k * L;     /* positions of it taken: 1..L */
		pos = k * Ln + (e < Ln ? e : Ln);
	}
	atomic_store_explicit(&((struct fw_state *)new_state)->pos,
	                      pos > UINT64_MAX ? UINT64_MAX : (uint64_t)pos, memory_order_release);
	return 0;
}

const struct rlt__engine_ops rlt__engine_fixed_window = {
	.state_size = fw_state_size,
	.init = fw_init,
	.destroy = fw_destroy,
	.copy = fw_copy,
	.decide = fw_decide,
	.refund = fw_refund,
	.available = fw_available,
};

/* ---------------------------------------------------------------------------------------------
 * Sliding window
 * ------------------------------------------------------------------------------------------- */

/* Slots in the ring of sub-window counters: the ten behind, the current one and the 21 a
 * reservation may look ahead all map to distinct slots. */
#define SW_RING 32
/* Sub-windows searched past the candidate's before giving up. A cost up to the limit always
 * conforms within 11 (by then everything recorded has left the period); this only bounds the
 * loop. */
#define SW_SCAN 21

struct sw_slot {
	uint64_t id;    /* absolute sub-window number (t / sub_ns) the count belongs to */
	uint64_t count; /* units admitted in that sub-window; a slot whose id differs reads as 0 */
};

struct sw_state {
	struct rlt__lock lock;       /* held for one decision (engine_lock.h) */
	uint64_t hw;                 /* the latest `now` seen: a stale reading is moved up to it */
	uint64_t last_at;            /* time of the latest admission: no later call goes before it */
	struct sw_slot slot[SW_RING]; /* indexed by sub-window number mod SW_RING */
};

/* RLT_LOCK_HELD (a holder that is gone counts as that: each update is ordered so that every
 * prefix of it is a valid state, see sw_record, so it needs no repair), RLT_LOCK_SELF, or
 * anything else when the lock could not be had (never with a valid state). */
static int sw_lock(struct rlt__lock *l)
{
	int rc = rlt__lock_take(l);

	return rc == RLT_LOCK_RECOVERED ? RLT_LOCK_HELD : rc;
}

static size_t sw_state_size(const struct rlt_params *p)
{
	(void)p;
	return sizeof(struct sw_state);
}

static int sw_init(const struct rlt_params *p, void *state, unsigned flags)
{
	struct sw_state *st = state;

	(void)p;
	memset(st, 0, sizeof *st);
	return rlt__lock_init(&st->lock, flags);
}

static void sw_destroy(const struct rlt_params *p, void *state)
{
	(void)p;
	rlt__lock_destroy(&((struct sw_state *)state)->lock);
}

/* A lock is never copied: dst gets its own, then everything after it and what nested calls
 * left pending, read under src's. */
static int sw_copy(const struct rlt_params *p, void *dst, void *src)
{
	struct sw_state *d = dst, *s = src;
	int rc = sw_init(p, d, 0);

	if (rc)
		return rc;
	if (sw_lock(&s->lock) != RLT_LOCK_HELD) {
		sw_destroy(p, d);
		return -EBUSY;
	}
	memcpy((char *)d + offsetof(struct sw_state, hw), (char *)s + offsetof(struct sw_state, hw),
	       sizeof *s - offsetof(struct sw_state, hw));
	atomic_store_explicit(&d->lock.pending, rlt__lock_pending(&s->lock), memory_order_relaxed);
	rlt__lock_release(&s->lock);
	return 0;
}

static uint64_t sw_get(const struct sw_state *st, uint64_t id)
{
	const struct sw_slot *s = &st->slot[id % SW_RING];

	return s->id == id ? s->count : 0;
}

/* Counts of sub-windows x-9..x, the ones wholly inside the period while x is current. */
static u128 sw_sum10(const struct sw_state *st, uint64_t x)
{
	u128 sum = 0;
	uint64_t i;

	for (i = 0; i < RLT_SLIDING_SUBWINDOWS && i <= x; i++)
		sum += sw_get(st, x - i);
	return sum;
}

/*
 * The earliest t >= cand at which `cost` conforms, or RLT_NS_NEVER. At t in sub-window x,
 * r = t - x*S into it, the period is (t - 10 S, t]; it holds all of sub-windows x-9..x and the
 * last S - 1 - r ns of x-10 (none of it at r = S - 1). So the estimate is
 * E(t) = sum(x-9..x) + old * (S - 1 - r) / S, old the count of x-10, and a cost conforms if
 * E(t) + cost <= L, compared exactly as (sum + cost) * S + old * (S - 1 - r) <= L * S.
 * (Weighing by S - r instead would leave the oldest a 1/S weight after it has left the period,
 * and a unit would then wait for the next sub-window: with small limits a whole sub-window in
 * eleven went unused, 0.91 L per period at L = 10.) E is continuous enough to never rise
 * between admissions: within a sub-window it only falls as r grows, so the smallest r is solved
 * for directly, and at a boundary it drops by old / S. Every recorded count lies at or before
 * cand (FIFO), so later sub-windows hold nothing yet. A cost above L never fits: it goes when
 * E(t) is 0 and is charged whole, so it delays (once the period is empty) instead of being
 * refused forever.
 */
static rlt_ns_t sw_earliest(const struct rlt_params *p, const struct sw_state *st, rlt_ns_t cand,
                            uint64_t cost)
{
	uint64_t S = p->sub_ns, L = p->limit, j = cand / S, r0 = cand % S, i;
	u128 budget = (u128)L * S;

	for (i = 0; i <= SW_SCAN; i++, r0 = 0) {
		uint64_t x = j + i, r;
		u128 sum, old, t;

		if (x > UINT64_MAX / S)
			break;
		sum = sw_sum10(st, x);
		old = x >= RLT_SLIDING_SUBWINDOWS ? sw_get(st, x - RLT_SLIDING_SUBWINDOWS) : 0;
		if (cost > L) {
			if (sum != 0)
				continue;
			/* the oldest weighs nothing at the last ns of the sub-window */
			r = old == 0 || r0 == S - 1 ? r0 : S - 1;
		} else {
			u128 need = (sum + cost) * S, q;

			if (need > budget)
				continue;
			/* old * (S - 1 - r) <= budget - need: at r = S - 1 it always holds */
			q = old == 0 ? S : (budget - need) / old;
			r = q >= S - 1 ? r0 : S - 1 - (uint64_t)q;
			if (r < r0)
				r = r0;
		}
		t = (u128)x * S + r;
		return t >= RLT_NS_NEVER ? RLT_NS_NEVER : (rlt_ns_t)t;
	}
	return RLT_NS_NEVER;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Records an admission of `cost` at t. The stores are ordered (the signal fences keep the
 * compiler from moving them) so that a process dying between any two of them leaves a valid
 * state: last_at first (a lost count is then only a call that never got its answer), and a
 * reused slot gets its count before its id (until then the old id, which no reader asks for
 * any more, holds it).
 */
static void sw_record(struct sw_state *st, uint64_t S, rlt_ns_t t, uint64_t cost)
{
	uint64_t x = t / S;
	struct sw_slot *sl = &st->slot[x % SW_RING];

	st->last_at = t;
	atomic_signal_fence(memory_order_seq_cst);
	if (sl->id == x) {
		sl->count = sat_add(sl->count, cost);
	} else {
		sl->count = cost;
		atomic_signal_fence(memory_order_seq_cst);
		sl->id = x;
	}
}

static enum rlt_verdict sw_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                  uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	struct sw_state *st = state;
	enum rlt_verdict v;
	rlt_ns_t t0, cand, t;
	uint64_t nested;
	int rc;

	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	if (p->sub_ns == 0 || p->limit == 0) {
		*at = RLT_NS_NEVER;
		return RLT_DENY;
	}
	rc = sw_lock(&st->lock);
	if (rc != RLT_LOCK_HELD)
		return rlt__lock_not_held(&st->lock, rc, now, cost, at);
	/* Threads read the clock before they queue for the lock, so `now` may be a little older
	 * than a reading already decided on; it is moved up to that one, which has certainly come,
	 * so that counts are recorded in time order. */
	t0 = now > st->hw ? now : st->hw;
	st->hw = t0;
	cand = t0 > st->last_at ? t0 : st->last_at;
	/* What nested calls took went already: recorded at the earliest time every count is
	 * recorded in order, which keeps it in the period at least as long as it should be. */
	nested = rlt__lock_pending(&st->lock);
	if (nested) {
		sw_record(st, p->sub_ns, cand, nested);
		rlt__lock_pending_done(&st->lock, nested);
	}
	t = sw_earliest(p, st, cand, cost);
	if (t == RLT_NS_NEVER) {
		v = RLT_DENY;
	} else if (mode == RLT_MODE_NOW ? t != t0 : t - now > p->max_wait_ns) {
		v = RLT_DENY;
	} else {
		sw_record(st, p->sub_ns, t, cost);
		v = t == t0 ? RLT_GO : RLT_WAIT;
	}
	rlt__lock_release(&st->lock);
	/* A GO is recorded at t0 and reports it, so that a refund finds its sub-window. */
	*at = t;
	return v;
}

static void sw_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units)
{
	struct sw_state *st = state;
	struct sw_slot *sl;
	uint64_t x;
	int rc;

	if (units == 0 || p->sub_ns == 0)
		return;
	rc = sw_lock(&st->lock);
	if (rc == RLT_LOCK_SELF) {
		/* a nested call's refund: its units are still pending */
		rlt__lock_pending_refund(&st->lock, units);
		return;
	}
	if (rc != RLT_LOCK_HELD)
		return;
	x = at / p->sub_ns;
	sl = &st->slot[x % SW_RING];
	if (sl->id == x)
		sl->count -= sl->count < units ? sl->count : units;
	rlt__lock_release(&st->lock);
}

/* Nested in the holder's decision (RLT_LOCK_SELF) it answers 0: "nothing known to spare",
 * which sizes no call up. */
static uint64_t sw_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	struct sw_state *st = state;
	uint64_t S = p->sub_ns, L = p->limit, x, r, avail = 0;
	u128 used;

	if (S == 0 || L == 0 || sw_lock(&st->lock) != RLT_LOCK_HELD)
		return 0;
	if (now < st->hw)
		now = st->hw;
	if (st->last_at <= now) {
		x = now / S;
		r = now % S;
		used = (sw_sum10(st, x) + rlt__lock_pending(&st->lock)) * S;
		if (x >= RLT_SLIDING_SUBWINDOWS)
			used += (u128)sw_get(st, x - RLT_SLIDING_SUBWINDOWS) * (S - 1 - r);
		if (used < (u128)L * S)
			avail = (uint64_t)(((u128)L * S - used) / S);
	}
	rlt__lock_release(&st->lock);
	return avail;
}

const struct rlt__engine_ops rlt__engine_sliding_window = {
	.state_size = sw_state_size,
	.init = sw_init,
	.destroy = sw_destroy,
	.copy = sw_copy,
	.decide = sw_decide,
	.refund = sw_refund,
	.available = sw_available,
};
