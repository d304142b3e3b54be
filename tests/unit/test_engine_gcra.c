/* test_engine_gcra.c: the token and leaky buckets against a fake clock, to the nanosecond. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "rlthrottle.h"

#define SEC RLT_NS_PER_SEC
#define MS 1000000ull
#define T0 (1000 * SEC) /* an arbitrary "boot + 1000 s" */
#define TEN_YEARS (10ull * 365 * 86400 * SEC)

struct eng {
	struct rlt_params p;
	_Alignas(16) unsigned char state[64];
};

static void mk(struct eng *e, enum rlt_algo algo, uint64_t num, uint64_t den, uint64_t period,
               uint64_t burst, uint64_t max_wait)
{
	struct rlt_error err;
	int rc = rlt_params_init(&e->p, algo, num, den, period, burst, max_wait, &err);
	if (rc != 0)
		fail_msg("params: %s", err.msg);
	assert_true(rlt_state_size(&e->p) <= sizeof e->state);
	assert_int_equal(rlt_state_init(&e->p, e->state, 0), 0);
}

static enum rlt_verdict dec(struct eng *e, rlt_ns_t now, uint64_t cost, enum rlt_mode m,
                            rlt_ns_t *at)
{
	return rlt_decide(&e->p, e->state, now, cost, m, at);
}

static void token_first_burst_then_exact_wait(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 10, 1, SEC, 0, RLT_NS_NEVER);
	assert_int_equal(e.p.burst, 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(at, T0);
	}
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(at, T0 + 100 * MS);
	/* a denial takes nothing: one ns early is still too early, the exact ns conforms */
	assert_int_equal(dec(&e, T0 + 100 * MS - 1, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(dec(&e, T0 + 100 * MS, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, T0 + 100 * MS, 1, RLT_MODE_NOW, &at), RLT_DENY);
}

static void token_reservations_fifo(void **s)
{
	struct eng e;
	rlt_ns_t at, prev = 0;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 10, 1, SEC, 0, RLT_NS_NEVER);
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	for (uint64_t i = 1; i <= 50; i++) {
		assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
		assert_int_equal(at, T0 + i * 100 * MS);
		assert_true(at > prev);
		prev = at;
	}
}

static void token_steady_and_idle_refill(void **s)
{
	struct eng e;
	rlt_ns_t at, t = T0;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 10, 1, SEC, 0, RLT_NS_NEVER);
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
	/* steady state: one every 100 ms, exactly */
	for (int i = 0; i < 100; i++) {
		t += 100 * MS;
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_DENY);
	}
	/* after a long idle spell, a full burst and not one more */
	t += 3600 * SEC;
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_DENY);
	/* half the refill time refills half the burst */
	t += 500 * MS;
	for (int i = 0; i < 5; i++)
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(rlt_available(&e.p, e.state, t), 0);
	assert_int_equal(rlt_available(&e.p, e.state, t + 350 * MS), 3);
}

static void token_cost_above_burst_waits_then_debt(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 1000, 1, SEC, 100, RLT_NS_NEVER);
	/* 250 units on a full bucket of 100: waits 150 ms, charged whole */
	assert_int_equal(dec(&e, T0, 250, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 150 * MS);
	assert_int_equal(dec(&e, T0, 250, RLT_MODE_NOW, &at), RLT_DENY);
	/* the next unit waits until the whole 250 is paid off: 250 ms, and 1 ms for itself
	 * less the 100 ms of burst */
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 151 * MS);
}

static void token_refund(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 1000, 1, SEC, 1000, RLT_NS_NEVER);
	assert_int_equal(dec(&e, T0, 1000, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_DENY);
	rlt_refund(&e.p, e.state, T0, 400); /* a short write used 600 */
	assert_int_equal(rlt_available(&e.p, e.state, T0), 400);
	assert_int_equal(dec(&e, T0, 400, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_DENY);
	/* a refund never makes the bucket hold more than its burst */
	rlt_refund(&e.p, e.state, T0, 1000000);
	assert_int_equal(rlt_available(&e.p, e.state, T0), 1000);
}

static void zero_and_maximal_costs(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 10, 1, SEC, 0, RLT_NS_NEVER);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(dec(&e, T0, 0, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_available(&e.p, e.state, T0), 10);
	assert_int_equal(dec(&e, T0, UINT64_MAX, RLT_MODE_RESERVE, &at), RLT_DENY);
	assert_int_equal(at, RLT_NS_NEVER);
	assert_int_equal(rlt_available(&e.p, e.state, T0), 10);
	mk(&e, RLT_ALGO_LEAKY, 10, 1, SEC, 0, RLT_NS_NEVER);
	assert_int_equal(dec(&e, T0, UINT64_MAX, RLT_MODE_RESERVE, &at), RLT_DENY);
}

static void clock_that_does_not_move(void **s)
{
	struct eng e;
	rlt_ns_t at;
	int go = 0;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 7, 1, SEC, 0, RLT_NS_NEVER);
	for (int i = 0; i < 10000; i++)
		go += dec(&e, T0, 1, RLT_MODE_NOW, &at) == RLT_GO;
	assert_int_equal(go, 7);
}

static void max_wait_denies_without_taking(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 10, 1, SEC, 0, 250 * MS);
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 200 * MS);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_DENY);
	assert_int_equal(at, T0 + 300 * MS);
	/* the denial took nothing: 50 ms later the 300 ms slot is within 250 ms */
	assert_int_equal(dec(&e, T0 + 50 * MS, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 300 * MS);
}

/* The n-th reservation of a saturated bucket is due at exactly ceil((n - burst) * period /
 * amount), however many came before: nothing drifts over a day, nor 10 years after boot. */
static void check_no_drift(uint64_t base, uint64_t num, uint64_t den, uint64_t period,
                           uint64_t cost, uint64_t n)
{
	struct eng e;
	rlt_ns_t at = 0;
	mk(&e, RLT_ALGO_TOKEN, num, den, period, 0, RLT_NS_NEVER);
	uint64_t burst = e.p.burst;
	unsigned __int128 units = 0;
	for (uint64_t i = 0; i < n; i++) {
		enum rlt_verdict v = dec(&e, base, cost, RLT_MODE_RESERVE, &at);
		assert_true(v == RLT_GO || v == RLT_WAIT);
		units += cost;
		unsigned __int128 owed = units > burst ? units - burst : 0;
		/* exact: ceil(owed * period * den / num) */
		unsigned __int128 want =
			(owed * period * den + num - 1) / num;
		if (at != base + (uint64_t)want)
			fail_msg("reservation %lu: at %lu, want %lu", (unsigned long)i,
			         (unsigned long)(at - base), (unsigned long)want);
	}
}

static void exact_over_a_day(void **s)
{
	(void)s;
	/* 1GiB/s in 1 GiB pieces over a day */
	check_no_drift(T0, 1ull << 30, 1, SEC, 1ull << 30, 86400);
	check_no_drift(TEN_YEARS, 1ull << 30, 1, SEC, 1ull << 30, 86400);
	/* 1 GiB/s in 1 MiB pieces over 100 s (102400 calls) */
	check_no_drift(TEN_YEARS, 1ull << 30, 1, SEC, 1ull << 20, 102400);
	/* 1/h for a day, 1e-3/s, 3/s (a period that does not divide) over a day */
	check_no_drift(T0, 1, 1, 3600 * SEC, 1, 25);
	check_no_drift(TEN_YEARS, 1, 1000, SEC, 1, 100);
	check_no_drift(T0, 3, 1, SEC, 1, 3 * 86400);
	check_no_drift(TEN_YEARS, 3, 1, SEC, 1, 3 * 86400);
	/* 8Mbit/s = 1e6 B/s, 1500-byte datagrams */
	check_no_drift(T0, 1000000, 1, SEC, 1500, 100000);
}

static void huge_cost(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_TOKEN, 1ull << 30, 1, SEC, 0, RLT_NS_NEVER);
	assert_int_equal(dec(&e, TEN_YEARS, 1ull << 40, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, TEN_YEARS + 1023 * SEC);
}

/*
 * Rates from 16 G to 10^18 units per second ("count, don't limit": 100GiB/s, 1TB/s, 1TiB/s):
 * many calls against a fake clock, early after boot and 8 years after, never pass more than
 * burst + rate * t, and a saturating caller gets the rate (to 0.1%) with no overflow: every
 * verdict is GO or a wait due within the interval, never the "never" of an overflowed clock.
 */
static void high_rate_run(enum rlt_algo algo, uint64_t num, uint64_t base, uint64_t seed)
{
	struct eng e;
	rlt_ns_t at, now = base;
	unsigned __int128 passed = 0;
	const uint64_t span = 50 * MS, most = num / 1000; /* a call: up to 1 ms of the rate */
	mk(&e, algo, num, 1, SEC, num / 100, RLT_NS_NEVER); /* burst: 10 ms */
	for (int i = 0; i < 200000 && now - base < span; i++) {
		/* a quarter of the calls are small: each is rounded up to a whole tick */
		uint64_t cost = 1 + rlt_test_rand(&seed) % (i % 4 ? most : 1000);
		enum rlt_verdict v = dec(&e, now, cost, RLT_MODE_NOW, &at);
		if (v == RLT_GO) {
			passed += cost; /* a saturating caller: the clock moves only when told to wait */
			continue;
		}
		assert_int_equal(v, RLT_DENY);
		assert_true(at != RLT_NS_NEVER);
		assert_true(at > now && at - now <= SEC);
		now = at;
	}
	assert_true(now - base >= span);
	unsigned __int128 allowed = (unsigned __int128)e.p.burst +
	                            (unsigned __int128)num * (now - base) / SEC;
	if (passed > allowed)
		fail_msg("rate %llu: passed %llu > allowed %llu", (unsigned long long)num,
		         (unsigned long long)passed, (unsigned long long)allowed);
	/* and gets the rate: all but the call it was told to wait for, to 0.1% */
	if (algo == RLT_ALGO_TOKEN && (passed + most) * 1000 < allowed * 999)
		fail_msg("rate %llu: passed %llu < 99.9%% of %llu", (unsigned long long)num,
		         (unsigned long long)passed, (unsigned long long)allowed);
}

static void rates_up_to_a_terabyte_and_beyond(void **s)
{
	/* ticks last at least 1/16 ns and a state holds 2^62 of them: 9 years of uptime */
	const uint64_t eight_years = 8ull * 365 * 86400 * SEC;
	static const uint64_t rates[] = {
		16000000000ull, 17000000000ull, 100ull << 30, 1000000000000ull, 1ull << 40,
		8000000000000ull / 8 * 10, 1000000000000000ull, 1000000000000000000ull,
	};
	struct eng e;
	rlt_ns_t at;
	(void)s;
	for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
		high_rate_run(RLT_ALGO_TOKEN, rates[i], T0, i + 1);
		high_rate_run(RLT_ALGO_TOKEN, rates[i], eight_years, i + 7);
		high_rate_run(RLT_ALGO_LEAKY, rates[i], T0, i + 13);
		high_rate_run(RLT_ALGO_LEAKY, rates[i], eight_years, i + 19);
	}
	/* 1 TB/s: the burst (one second) passes at once, then 1 TB more waits exactly 1 s */
	mk(&e, RLT_ALGO_TOKEN, 1000000000000ull, 1, SEC, 0, RLT_NS_NEVER);
	assert_true(e.p.unit_shift > 0);
	assert_int_equal(dec(&e, eight_years, 1000000000000ull, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, eight_years, 1000000000000ull, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_true(at >= eight_years + SEC && at <= eight_years + SEC + 1);
	/* a refund smaller than a tick gives nothing back (and never the whole bucket) */
	rlt_refund(&e.p, e.state, at, 1);
	assert_int_equal(dec(&e, eight_years, 1, RLT_MODE_NOW, &at), RLT_DENY);
	/* a refund of the whole second gives the second back */
	rlt_refund(&e.p, e.state, at, 1000000000000ull);
	assert_int_equal(dec(&e, eight_years + SEC, 1000000000000ull, RLT_MODE_NOW, &at), RLT_GO);
	/* what is available is counted in units, not ticks */
	mk(&e, RLT_ALGO_TOKEN, 1ull << 40, 1, SEC, 0, RLT_NS_NEVER);
	assert_int_equal(rlt_available(&e.p, e.state, T0), 1ull << 40);
}

static void bad_params(void **s)
{
	struct rlt_params p;
	struct rlt_error err;
	(void)s;
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 0, 1, SEC, 0, 0, &err), -EINVAL);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1, 1, 0, 0, 0, &err), -EINVAL);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_COUNT, 1, 1, SEC, 0, 0, &err), -EINVAL);
	/* 10^18 units per second is the maximum; windows stop at 16 G */
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1000000000000000001ull, 1, SEC, 0, 0,
	                                 &err),
	                 -ERANGE);
	assert_non_null(strstr(err.msg, "too high"));
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1000000000000000000ull, 1, SEC, 0, 0,
	                                 &err),
	                 0);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 17000000000ull, 1, SEC, 0, 0, &err),
	                 0);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_FIXED_WINDOW, 17000000000ull, 1, SEC, 0, 0,
	                                 &err),
	                 -ERANGE);
	assert_non_null(strstr(err.msg, "for a window"));
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_FIXED_WINDOW, 16000000000ull, 1, SEC, 0, 0,
	                                 &err),
	                 0);
	/* above 16 units per ns a tick holds several units: a burst below one tick is refused */
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1000000000000ull, 1, SEC, 10, 0, &err),
	                 -ERANGE);
	assert_non_null(strstr(err.msg, "burst is too small"));
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1, 1, SEC, UINT64_MAX, 0, &err),
	                 -ERANGE);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_FIXED_WINDOW, 3, 2, SEC, 0, 0, &err),
	                 -EINVAL);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_SLIDING_LOG, 2000000, 1, SEC, 0, 0, &err),
	                 -ERANGE);
	/* defaults: one second of the rate, at least one unit */
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 120, 1, 60 * SEC, 0, 0, &err), 0);
	assert_int_equal(p.burst, 2);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_LEAKY, 1, 1, 3600 * SEC, 0, 0, &err), 0);
	assert_int_equal(p.burst, 1);
	assert_int_equal(rlt_params_init(&p, RLT_ALGO_TOKEN, 1ull << 20, 1, SEC, 0, 0, &err), 0);
	assert_int_equal(p.burst, 1ull << 20);
	assert_string_equal(rlt_algo_name(RLT_ALGO_SLIDING_WINDOW), "sliding-window");
}

static void leaky_even_spacing_and_overflow(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_LEAKY, 10, 1, SEC, 0, RLT_NS_NEVER);
	assert_int_equal(e.p.burst, 10);
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_GO);
	/* no burst passes: the next is 100 ms later */
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(at, T0 + 100 * MS);
	for (uint64_t i = 1; i <= 10; i++) {
		assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
		assert_int_equal(at, T0 + i * 100 * MS);
	}
	/* 11 units now wait ahead: more than the burst of 10 is ahead, so it overflows, even
	 * in reserve mode, and nothing is taken */
	assert_int_equal(dec(&e, T0, 1, RLT_MODE_RESERVE, &at), RLT_DENY);
	assert_int_equal(at, T0 + 100 * MS);
	assert_int_equal(dec(&e, T0 + 100 * MS, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 1100 * MS);
	assert_int_equal(rlt_available(&e.p, e.state, T0 + 1100 * MS), 0);
	assert_int_equal(rlt_available(&e.p, e.state, T0 + 1200 * MS), 10);
}

static void leaky_cost_spacing_refund_max_wait(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_LEAKY, 1000, 1, SEC, 500, 300 * MS);
	assert_int_equal(dec(&e, T0, 200, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(dec(&e, T0, 100, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 200 * MS);
	/* 300 ms ahead: exactly max-wait, so it waits; the next would wait 350 ms */
	assert_int_equal(dec(&e, T0, 50, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 300 * MS);
	assert_int_equal(dec(&e, T0, 50, RLT_MODE_RESERVE, &at), RLT_DENY);
	assert_int_equal(at, T0 + 350 * MS);
	/* the 100-unit call used only 40: the next starts 60 ms sooner */
	rlt_refund(&e.p, e.state, T0 + 200 * MS, 60);
	assert_int_equal(dec(&e, T0, 50, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, T0 + 290 * MS);
}

/* Property: with costs up to the burst, what is admitted (by go time) in any interval
 * [a, b] never exceeds burst + rate * (b - a + 1 ns). Checked over every pair of go times. */
struct adm {
	rlt_ns_t at;
	uint64_t cost;
};

static int by_at(const void *a, const void *b)
{
	const struct adm *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

static void token_property_random(void **s)
{
	enum { N = 3000 };
	static struct adm adm[N];
	(void)s;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		uint64_t rs = seed, num = rlt_test_range(&rs, 1, 5000);
		uint64_t period = rlt_test_range(&rs, 1, 3000) * MS;
		uint64_t burst = rlt_test_range(&rs, 1, 50);
		struct eng e;
		rlt_ns_t t = T0 + rlt_test_range(&rs, 0, TEN_YEARS), at;
		size_t n = 0;
		mk(&e, RLT_ALGO_TOKEN, num, 1, period, burst, RLT_NS_NEVER);
		for (int i = 0; i < N * 3 && n < N; i++) {
			uint64_t cost = rlt_test_range(&rs, 1, burst);
			enum rlt_mode m = rlt_test_rand(&rs) & 1 ? RLT_MODE_NOW : RLT_MODE_RESERVE;
			t += rlt_test_range(&rs, 0, 2 * period / num + 1);
			enum rlt_verdict v = dec(&e, t, cost, m, &at);
			if (v != RLT_DENY) {
				assert_true(at >= t);
				adm[n].at = at;
				adm[n++].cost = cost;
			}
			if (m == RLT_MODE_RESERVE && v == RLT_WAIT)
				t = at; /* a caller waits for its slot before it asks again */
		}
		qsort(adm, n, sizeof adm[0], by_at);
		for (size_t i = 0; i < n; i++) {
			unsigned __int128 sum = 0;
			for (size_t j = i; j < n; j++) {
				sum += adm[j].cost;
				/* sum <= burst + num * (span + 1) / period */
				unsigned __int128 span = adm[j].at - adm[i].at + 1;
				if (sum * period > (unsigned __int128)burst * period + span * num)
					fail_msg("seed %lu: %lu units in %lu ns", (unsigned long)seed,
					         (unsigned long)sum, (unsigned long)span);
			}
		}
	}
}

/* Under steady overload the admitted rate is the rate (within 0.1 %), in both modes. */
static void token_overload_rate(void **s)
{
	(void)s;
	for (int mode = 0; mode < 2; mode++) {
		struct eng e;
		rlt_ns_t t = T0, at, end = T0 + 1000 * SEC;
		uint64_t admitted = 0;
		mk(&e, RLT_ALGO_TOKEN, 100, 1, SEC, 0, RLT_NS_NEVER);
		while (t < end) {
			enum rlt_verdict v = dec(&e, t, 1, mode ? RLT_MODE_RESERVE : RLT_MODE_NOW, &at);
			if (v != RLT_DENY && at < end)
				admitted++;
			t += mode ? (v == RLT_WAIT ? at - t : 0) + 3 * MS : 3 * MS;
		}
		/* 1000 s at 100/s plus the burst */
		assert_true(admitted >= 100000 && admitted <= 100100 + 100);
	}
}

static void leaky_property_spacing(void **s)
{
	(void)s;
	for (uint64_t seed = 11; seed <= 16; seed++) {
		uint64_t rs = seed, num = rlt_test_range(&rs, 1, 100000);
		struct eng e;
		rlt_ns_t t = T0, at, last_at = 0;
		uint64_t last_cost = 0;
		mk(&e, RLT_ALGO_LEAKY, num, 1, SEC, 0, RLT_NS_NEVER);
		for (int i = 0; i < 20000; i++) {
			uint64_t cost = rlt_test_range(&rs, 1, e.p.burst);
			t += rlt_test_range(&rs, 0, SEC / num * 2);
			enum rlt_verdict v = dec(&e, t, cost, RLT_MODE_RESERVE, &at);
			if (v == RLT_DENY)
				continue;
			if (last_cost) {
				/* go times are spaced by the previous call's cost, less under 1 ns */
				unsigned __int128 gap = (unsigned __int128)(at - last_at) * num;
				assert_true(gap + num > (unsigned __int128)last_cost * SEC);
			}
			last_at = at;
			last_cost = cost;
		}
	}
}

/* 8 threads, 100,000 reservations each, one state, a clock that does not move: every
 * reservation gets its own slot, and the slots are exactly the schedule. */
static struct eng shared_eng;
static rlt_ns_t *slots;
static atomic_uint_fast64_t next_slot;

static void *reserve_many(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		rlt_ns_t at;
		enum rlt_verdict v = rlt_decide(&shared_eng.p, shared_eng.state, T0, 1,
		                                 RLT_MODE_RESERVE, &at);
		if (v == RLT_DENY)
			abort();
		slots[atomic_fetch_add(&next_slot, 1)] = at;
	}
	return NULL;
}

static void *now_many(void *arg)
{
	uint64_t *go = arg;
	for (int i = 0; i < 100000; i++) {
		rlt_ns_t at;
		*go += rlt_decide(&shared_eng.p, shared_eng.state, T0, 1, RLT_MODE_NOW, &at) ==
		       RLT_GO;
	}
	return NULL;
}

static int cmp_ns(const void *a, const void *b)
{
	rlt_ns_t x = *(const rlt_ns_t *)a, y = *(const rlt_ns_t *)b;
	return x < y ? -1 : x > y;
}

static void token_threads_exact(void **s)
{
	enum { THREADS = 8, TOTAL = THREADS * 100000 };
	pthread_t th[THREADS];
	uint64_t go[THREADS] = {0}, sum = 0;
	(void)s;

	mk(&shared_eng, RLT_ALGO_TOKEN, 1000000, 1, SEC, 1000, RLT_NS_NEVER);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, now_many, &go[i]);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		sum += go[i];
	}
	assert_int_equal(sum, 1000);

	mk(&shared_eng, RLT_ALGO_TOKEN, 1000000, 1, SEC, 1000, RLT_NS_NEVER);
	slots = calloc(TOTAL, sizeof *slots);
	assert_non_null(slots);
	atomic_store(&next_slot, 0);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, reserve_many, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	qsort(slots, TOTAL, sizeof *slots, cmp_ns);
	/* the first 1000 go at once, then one every microsecond, no slot given twice */
	for (uint64_t i = 0; i < TOTAL; i++) {
		rlt_ns_t want = T0 + (i < 1000 ? 0 : (i - 999) * 1000);
		if (slots[i] != want)
			fail_msg("slot %lu at %lu, want %lu", (unsigned long)i,
			         (unsigned long)slots[i], (unsigned long)want);
	}
	free(slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_first_burst_then_exact_wait),
		cmocka_unit_test(token_reservations_fifo),
		cmocka_unit_test(token_steady_and_idle_refill),
		cmocka_unit_test(token_cost_above_burst_waits_then_debt),
		cmocka_unit_test(token_refund),
		cmocka_unit_test(zero_and_maximal_costs),
		cmocka_unit_test(clock_that_does_not_move),
		cmocka_unit_test(max_wait_denies_without_taking),
		cmocka_unit_test(exact_over_a_day),
		cmocka_unit_test(huge_cost),
		cmocka_unit_test(bad_params),
		cmocka_unit_test(rates_up_to_a_terabyte_and_beyond),
		cmocka_unit_test(leaky_even_spacing_and_overflow),
		cmocka_unit_test(leaky_cost_spacing_refund_max_wait),
		cmocka_unit_test(token_property_random),
		cmocka_unit_test(token_overload_rate),
		cmocka_unit_test(leaky_property_spacing),
		cmocka_unit_test(token_threads_exact),
	};
	return cmocka_run_group_tests_name("engine_gcra", tests, NULL, NULL);
}
