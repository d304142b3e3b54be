/*
 * engine.c: builds engine params from a rate, and dispatches the public engine calls to the
 * algorithm's table of operations.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdatomic.h>

#include "engine.h"
#include "rlthrottle.h"

typedef unsigned __int128 u128;

/* A state word's ticks stay below 2^62 so that base + cost never wraps 64 bits. */
#define TICK_LIMIT (1ull << 62)
/* Ticks per ns are at most 16: 2^64 ticks then hold 2^60 ns, 36 years of CLOCK_MONOTONIC. */
#define TICKS_PER_NS_MAX 16u

static const struct rlt__engine_ops *const ops_of[RLT_ALGO_COUNT] = {
	[RLT_ALGO_TOKEN] = &rlt__engine_token,
	[RLT_ALGO_LEAKY] = &rlt__engine_leaky,
	[RLT_ALGO_FIXED_WINDOW] = &rlt__engine_fixed_window,
	[RLT_ALGO_SLIDING_WINDOW] = &rlt__engine_sliding_window,
	[RLT_ALGO_SLIDING_LOG] = &rlt__engine_sliding_log,
};

static const char *const algo_names[RLT_ALGO_COUNT] = {
	[RLT_ALGO_TOKEN] = "token",
	[RLT_ALGO_LEAKY] = "leaky",
	[RLT_ALGO_FIXED_WINDOW] = "fixed-window",
	[RLT_ALGO_SLIDING_WINDOW] = "sliding-window",
	[RLT_ALGO_SLIDING_LOG] = "sliding-log",
};

const char *rlt_algo_name(enum rlt_algo a)
{
	return (unsigned)a < RLT_ALGO_COUNT ? algo_names[a] : "unknown";
}

static u128 gcd128(u128 a, u128 b)
{
	while (b) {
		u128 t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static int fail(struct rlt_error *err, int code, const char *why)
{
	if (err)
		snprintf(err->msg, sizeof err->msg, "%s", why);
	return code;
}

/*
 * Token and leaky count time in ticks. The largest power of two K (ticks per unit) is chosen
 * such that a tick lasts at least 1/16 ns (so 64 bits hold 36 years of clock) and the burst in
 * ticks stays below 2^62. The finer the tick, the less the floor of a clock reading gives away.
 *
 * Above 16 units per ns (16 G units per second: rates such as 100GiB/s or 1TB/s, written to
 * count rather than limit) even one tick per unit would make ticks shorter than 1/16 ns, and
 * 2^62 of them would hold less than 36 years of CLOCK_MONOTONIC (53 days at 1 TB/s): then a
 * tick is 2^unit_shift units instead, the least power of two that keeps it 1/16 ns or longer.
 * A cost is rounded up to whole ticks (less than 2^unit_shift units more per call, a few
 * hundred bytes at 1 TB/s), a refund down, so the rate is never exceeded.
 */
static int init_ticks(struct rlt_params *p, struct rlt_error *err)
{
	uint64_t k = 1;
	unsigned s = 0;

	if (p->rate_den_ns > (TICK_LIMIT >> 4))
		return fail(err, -ERANGE, "the rate has too many digits to keep exactly");
	while ((u128)p->rate_num > ((u128)p->rate_den_ns << s) * TICKS_PER_NS_MAX)
		s++;
	if (s) {
		if (((u128)p->rate_den_ns << s) > UINT64_MAX)
			return fail(err, -ERANGE, "the rate has too many digits to keep exactly");
		if ((p->burst >> s) == 0) {
			if (err)
				snprintf(err->msg, sizeof err->msg,
				         "burst is too small for so high a rate (at least %llu units)",
				         1ull << s);
			return -ERANGE;
		}
		u128 most = ((u128)(TICK_LIMIT - 1) << s);
		uint64_t round = (1ull << s) - 1;
		p->unit_shift = s;
		p->unit_round = round;
		p->ticks_per_unit = 1;
		p->tick_num = p->rate_num;
		p->tick_den = p->rate_den_ns << s;
		p->tick_recip = (uint64_t)(((u128)p->tick_num << 59) / p->tick_den);
		/* cost + unit_round must not wrap either */
		p->max_cost = most > UINT64_MAX - round ? UINT64_MAX - round : (uint64_t)most;
		p->tau = p->burst >> s;
		return 0;
	}
	/* rate_num * K <= 16 * rate_den_ns, and burst * K < 2^62 */
	while (k < (1ull << 62)) {
		u128 next = (u128)k * 2;
		if ((u128)p->rate_num * next > (u128)p->rate_den_ns * TICKS_PER_NS_MAX)
			break;
		if ((u128)p->burst * next >= TICK_LIMIT)
			break;
		k = (uint64_t)next;
	}
	if ((u128)p->burst * k >= TICK_LIMIT)
		return fail(err, -ERANGE, "burst is too large");
	p->ticks_per_unit = k;
	p->tick_num = p->rate_num * k;
	p->tick_den = p->rate_den_ns;
	p->tick_recip = (uint64_t)(((u128)p->tick_num << 59) / p->tick_den);
	p->max_cost = TICK_LIMIT / k;
	p->tau = p->burst * k;
	return 0;
}

int rlt_params_init(struct rlt_params *p, enum rlt_algo algo, uint64_t amount_num,
                    uint64_t amount_den, uint64_t period_ns, uint64_t burst,
                    uint64_t max_wait_ns, struct rlt_error *err)
{
	u128 num, den, g;

	memset(p, 0, sizeof *p);
	if ((unsigned)algo >= RLT_ALGO_COUNT)
		return fail(err, -EINVAL, "unknown algorithm");
	if (amount_num == 0 || amount_den == 0 || period_ns == 0)
		return fail(err, -EINVAL, "a rate must be more than zero");

	num = amount_num;
	den = (u128)amount_den * period_ns;
	g = gcd128(num, den);
	num /= g;
	den /= g;
	if (den > UINT64_MAX)
		return fail(err, -ERANGE, "the rate has too many digits to keep exactly");
	if (num * RLT_NS_PER_SEC > den * RLT_RATE_MAX_PER_SEC)
		return fail(err, -ERANGE, "the rate is too high (at most 10^18 units per second)");
	/* A window's counters count units since boot: 16 G a second keeps 36 years in 64 bits. */
	if (algo != RLT_ALGO_TOKEN && algo != RLT_ALGO_LEAKY &&
	    num * RLT_NS_PER_SEC > den * RLT_WINDOW_RATE_MAX_PER_SEC)
		return fail(err, -ERANGE,
		            "the rate is too high for a window (at most 16 G units per second; "
		            "algo=token or leaky go to 10^18)");

	p->algo = algo;
	p->rate_num = (uint64_t)num;
	p->rate_den_ns = (uint64_t)den;
	p->max_wait_ns = max_wait_ns;

	switch (algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		if (burst == 0) {
			/* One second of the rate, at least one unit. */
			u128 b = num * RLT_NS_PER_SEC / den;
			burst = b == 0 ? 1 : b > UINT64_MAX ? UINT64_MAX : (uint64_t)b;
		}
		p->burst = burst;
		return init_ticks(p, err);
	case RLT_ALGO_FIXED_WINDOW:
	case RLT_ALGO_SLIDING_WINDOW:
	case RLT_ALGO_SLIDING_LOG:
		if (amount_num % amount_den != 0)
			return fail(err, -EINVAL,
			            "a window admits a whole number of units per period");
		p->limit = amount_num / amount_den;
		p->window_ns = period_ns;
		p->burst = p->limit;
		if (algo == RLT_ALGO_SLIDING_WINDOW) {
			if (period_ns % RLT_SLIDING_SUBWINDOWS != 0)
				return fail(err, -EINVAL,
				            "a sliding window's period must split into 10 whole ns");
			p->sub_ns = period_ns / RLT_SLIDING_SUBWINDOWS;
		}
		if (algo == RLT_ALGO_SLIDING_LOG && p->limit > RLT_LOG_MAX_LIMIT)
			return fail(err, -ERANGE,
			            "sliding-log keeps at most 1000000 entries per period");
		return 0;
	default:
		return fail(err, -EINVAL, "unknown algorithm");
	}
}

/* np's ticks at old's tick size (ticks_per_unit, unit_shift): the arithmetic of init_ticks
 * with K given instead of chosen. */
static int retick(struct rlt_params *np, const struct rlt_params *old, struct rlt_error *err)
{
	unsigned s = old->unit_shift;
	uint64_t k = old->ticks_per_unit;
	u128 num = (u128)np->rate_num * k, den = (u128)np->rate_den_ns << s;

	if (num > UINT64_MAX || den > UINT64_MAX || num > den * TICKS_PER_NS_MAX) {
		/* the most units per second whose ticks still keep the whole clock span */
		u128 most = (u128)TICKS_PER_NS_MAX * RLT_NS_PER_SEC << s;
		if (err)
			snprintf(err->msg, sizeof err->msg,
			         "the rate is too far above the one the rule started with for a "
			         "state of every connection (at most %llu units per second without "
			         "a restart)",
			         (unsigned long long)(most / k));
		return -EXDEV;
	}
	if (s && (np->burst >> s) == 0)
		return fail(err, -ERANGE, "burst is too small for the rule's tick");
	if (!s && (u128)np->burst * k >= TICK_LIMIT)
		return fail(err, -ERANGE, "burst is too large");
	np->ticks_per_unit = k;
	np->unit_shift = s;
	np->unit_round = old->unit_round;
	np->max_cost = old->max_cost;
	np->tick_num = (uint64_t)num;
	np->tick_den = (uint64_t)den;
	np->tick_recip = (uint64_t)(((u128)np->tick_num << 59) / np->tick_den);
	np->tau = s ? np->burst >> s : np->burst * k;
	return 0;
}

/* The tick-keeping retune: np continues old's ticks from `now` (epoch_ns, epoch_ticks), so
 * that every state built on old stays valid untouched and counts its units at np's rate. What
 * a rule with many states (one per connection, one per key) gets from a set: none of them is
 * rewritten. 1 when np is too fast for old's ticks (it then has its own). */
int rlt__params_retune_keep(struct rlt_params *np, const struct rlt_params *old, rlt_ns_t now,
                            struct rlt_error *err)
{
	struct rlt_params fresh = *np;
	/* where old's ticks stand now, before np's tick fields are replaced */
	uint64_t at = rlt__gcra_ticks_of(old, now);
	int rc = retick(np, old, err);

	if (rc == -EXDEV) {
		/* ticks of old's size would run out within the clock's span: np keeps its own,
		 * and a state carried over (rlt_state_carry) goes with it */
		*np = fresh;
		return 1;
	}
	if (rc)
		return rc;
	np->epoch_ns = now;
	np->epoch_ticks = at;
	return 0;
}

int rlt_params_retune(struct rlt_params *np, const struct rlt_params *old, rlt_ns_t now,
                      struct rlt_error *err)
{
	(void)now; /* the carry takes the instant (rlt_state_carry) */
	if (np->algo != old->algo)
		return fail(err, -EINVAL, "a different algorithm is a different rule");
	switch (old->algo) {
	case RLT_ALGO_TOKEN:
	case RLT_ALGO_LEAKY:
		/* The same rate and burst (a new max-wait, action or errno): old's params go on,
		 * and so does every state. */
		if (np->rate_num == old->rate_num && np->rate_den_ns == old->rate_den_ns &&
		    np->burst == old->burst) {
			uint64_t mw = np->max_wait_ns;
			*np = *old;
			np->max_wait_ns = mw;
			return 0;
		}
		/* A new rate or burst: the budget carries over as a share of the burst
		 * (rlt_state_carry), into a state that counts in np's own ticks (rlthrottle(1) COMMANDS). */
		return 1;
	default:
		/* The windows' counters and the log's entries are kept per window or sub-window
		 * of the period they were taken in: another period would cut them differently. */
		if (np->window_ns != old->window_ns)
			return fail(err, -EINVAL,
			            "a window's or a log's period cannot change while it runs (its "
			            "counts are kept per period): the same period with a new "
			            "amount, or a restart");
		if (old->algo == RLT_ALGO_SLIDING_LOG) {
			/* The ring is shared by calls under either params: it keeps the size it
			 * was made with, and the limit may move anywhere up to it. */
			np->epoch_ticks = old->epoch_ticks ? old->epoch_ticks : old->limit;
			if (np->limit > np->epoch_ticks) {
				if (err)
					snprintf(err->msg, sizeof err->msg,
					         "sliding-log's log holds at most %llu entries (its "
					         "limit when it started): a higher limit needs a "
					         "restart",
					         (unsigned long long)np->epoch_ticks);
				return -ERANGE;
			}
		}
		/* The fixed window's word is a position laid out for the limit (engine_window.c):
		 * a new limit lays it out anew, in a state of its own (rlt_state_carry). The
		 * sliding window and the log count units taken, whatever the limit: they judge
		 * the same counts against the new one at once. */
		if (old->algo == RLT_ALGO_FIXED_WINDOW && np->limit != old->limit) {
			/* read only where a state cannot be carried (one per connection) */
			fail(err, 0,
			     "a fixed window's new limit lays its counter out anew, which cannot be "
			     "done for every connection's: restart with it");
			return 1;
		}
		return 0;
	}
}

static uint64_t below_limit(u128 t)
{
	return t >= TICK_LIMIT ? TICK_LIMIT - 1 : (uint64_t)t;
}

/* d ticks of old as units (rounded up: what is owed), in np's ticks. */
static u128 units_in(const struct rlt_params *old, const struct rlt_params *np, u128 d)
{
	u128 units = (d + old->ticks_per_unit - 1) / old->ticks_per_unit << old->unit_shift;

	if (units >= ((u128)1 << 64))
		return TICK_LIMIT;
	return ((units + np->unit_round) >> np->unit_shift) * np->ticks_per_unit;
}

/*
 * A state x (a TAT in old's ticks) at `since`, in np's ticks: the one rule by which a budget
 * carries over a set (rlthrottle(1) COMMANDS). How full the bucket is goes over as a share of the burst: a
 * token bucket's credit (x behind the clock, at most a burst) and its emptiness (x ahead of
 * the clock by up to a burst: what has gone lately) scale from old's burst to np's, so a
 * sender that had emptied a burst of 1 MiB has emptied the new burst of 16 KiB, not 1 MiB of
 * it, and a raise never finds more than its own burst to let through. What stands beyond the
 * burst (and, in a leaky bucket, everything ahead) is reserved by calls waiting now: it keeps
 * its units, which the waiters move at np's rate; a dry-run's lag there was no one's wait and
 * does not carry (RLT_CARRY_DRY_RUN), nor does anything past the saturated end of the ticks
 * turn into units. A go time maps the same way (carry_go).
 */
static uint64_t carry_state(const struct rlt_params *old, const struct rlt_params *np,
                            rlt_ns_t since, uint64_t x, unsigned flags)
{
	uint64_t o = rlt__gcra_ticks_of(old, since), n = rlt__gcra_ticks_of(np, since);
	int leaky = old->algo == RLT_ALGO_LEAKY;

	if (x <= o) {
		if (leaky)
			return n; /* nothing waits: an idle meter */
		u128 c = o - x < old->tau ? o - x : old->tau;
		u128 back = c * np->tau / old->tau; /* a credit rounds down */
		return back >= n ? 0 : n - (uint64_t)back;
	}
	u128 d = x - o, t = n;
	if (!leaky) {
		u128 share = d < old->tau ? d : old->tau;
		t += (share * np->tau + old->tau - 1) / old->tau; /* emptiness rounds up */
		d -= share;
	}
	/* a TAT at the end of the ticks is a clamp (a rate set absurdly low), not a queue */
	if ((flags & RLT_CARRY_DRY_RUN) || x >= TICK_LIMIT - 1)
		d = 0;
	return below_limit(t + units_in(old, np, d));
}

/* A waiting call's go position g in old's ticks, in np's: due already, or the units still
 * ahead of it at np's rate (a token bucket's waiter goes when its TAT' less the burst comes:
 * carry_state of g + old's burst, less np's burst). */
static uint64_t carry_go(const struct rlt_params *old, const struct rlt_params *np,
                         rlt_ns_t since, uint64_t g)
{
	uint64_t o = rlt__gcra_ticks_of(old, since), n = rlt__gcra_ticks_of(np, since);

	if (g <= o || g >= TICK_LIMIT - 1) /* due, or clamped: no queue to keep */
		return n;
	return below_limit(n + units_in(old, np, g - o));
}

uint64_t rlt__params_pos(const struct rlt_params *p, rlt_ns_t at)
{
	if (p->algo != RLT_ALGO_TOKEN && p->algo != RLT_ALGO_LEAKY)
		return at;
	return rlt__gcra_ticks_of(p, at);
}

rlt_ns_t rlt__params_pos_ns(const struct rlt_params *p, uint64_t pos)
{
	if (p->algo != RLT_ALGO_TOKEN && p->algo != RLT_ALGO_LEAKY)
		return pos;
	return rlt__gcra_ns_of(p, pos);
}

uint64_t rlt__params_remap_pos(const struct rlt_params *old, const struct rlt_params *np,
                               rlt_ns_t since, uint64_t pos, int carried)
{
	if (old->algo != RLT_ALGO_TOKEN && old->algo != RLT_ALGO_LEAKY)
		return pos; /* windows keep their go times: rlt__fw_carry keeps their places */
	/* not carried: np counts in old's ticks (the same position), or is old's */
	return carried ? carry_go(old, np, since, pos) : pos;
}

rlt_ns_t rlt_params_remap(const struct rlt_params *old, const struct rlt_params *np,
                          rlt_ns_t since, rlt_ns_t at, int carried)
{
	if (at == RLT_NS_NEVER || old == np)
		return at;
	return rlt__params_pos_ns(
		np, rlt__params_remap_pos(old, np, since, rlt__params_pos(old, at), carried));
}

int rlt_state_carry(const struct rlt_params *old, void *old_state, const struct rlt_params *np,
                    void *new_state, rlt_ns_t since, unsigned flags)
{
	if (old->algo == RLT_ALGO_FIXED_WINDOW && np->algo == RLT_ALGO_FIXED_WINDOW)
		return rlt__fw_carry(old, old_state, np, new_state, since);
	if (old->algo != RLT_ALGO_TOKEN && old->algo != RLT_ALGO_LEAKY)
		return -EINVAL;
	_Atomic uint64_t *o = old_state, *n = new_state;
	atomic_store_explicit(n, carry_state(old, np, since, atomic_load(o), flags),
	                      memory_order_release);
	return 0;
}

size_t rlt_state_size(const struct rlt_params *p)
{
	return ops_of[p->algo]->state_size(p);
}

int rlt_state_init(const struct rlt_params *p, void *state, unsigned flags)
{
	return ops_of[p->algo]->init(p, state, flags);
}

void rlt_state_destroy(const struct rlt_params *p, void *state)
{
	ops_of[p->algo]->destroy(p, state);
}

int rlt_state_copy(const struct rlt_params *p, void *dst, void *src)
{
	return ops_of[p->algo]->copy(p, dst, src);
}

enum rlt_verdict rlt_decide(const struct rlt_params *p, void *state, rlt_ns_t now, uint64_t cost,
                            enum rlt_mode mode, rlt_ns_t *at)
{
	if (cost == 0) {
		*at = now;
		return RLT_GO;
	}
	if (__builtin_expect(p->algo == RLT_ALGO_TOKEN, 1))
		return rlt__token_decide(p, state, now, cost, mode, at);
	return ops_of[p->algo]->decide(p, state, now, cost, mode, at);
}

void rlt_refund(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units)
{
	if (units)
		ops_of[p->algo]->refund(p, state, at, units);
}

uint64_t rlt_available(const struct rlt_params *p, void *state, rlt_ns_t now)
{
	return ops_of[p->algo]->available(p, state, now);
}
