/* test_engine_sliding_window.c: src/engine_window.c's sliding window (ten sub-windows) against a
 * fake clock, to the nanosecond (the fixed window: test_engine_fixed_window.c). */
#include <stdlib.h>
#include <string.h>

#include "engine_harness.h"

#define SW_W 10000ull /* 10 sub-windows of 1000 ns */
#define SW_S 1000ull

static void sw_first_fill_deny_weight(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 10, SW_W, NEVER);
	assert_int_equal(avail(&e, 999), 10);
	expect_dec(&e, 999, 1, RLT_MODE_NOW, RLT_GO, 999);
	assert_int_equal(avail(&e, 999), 9);
	for (int i = 0; i < 9; i++)
		assert_int_equal(dec(&e, 999, 1, RLT_MODE_NOW, &at), RLT_GO);
	/* all 10 in sub-window 0: they count whole until sub-window 10, then by the part still
	 * inside the period, (S - 1 - r) / S; one more fits once 10 * (999 - r) / 1000 <= 9, at
	 * r = 99 */
	expect_dec(&e, 999, 1, RLT_MODE_NOW, RLT_DENY, 10099);
	assert_int_equal(avail(&e, 9999), 0);
	assert_int_equal(avail(&e, 10098), 0);
	assert_int_equal(avail(&e, 10099), 1);
	assert_int_equal(avail(&e, 10198), 1);
	assert_int_equal(avail(&e, 10199), 2);
	assert_int_equal(avail(&e, 10998), 9);
	assert_int_equal(avail(&e, 10999), 10);
	assert_int_equal(avail(&e, 11000), 10);
	expect_dec(&e, 10098, 1, RLT_MODE_NOW, RLT_DENY, 10099);
	expect_dec(&e, 10099, 1, RLT_MODE_NOW, RLT_GO, 10099);
	/* the one just taken counts whole: the next needs r >= 199 */
	expect_dec(&e, 10150, 1, RLT_MODE_NOW, RLT_DENY, 10199);
	/* two at once need r >= 299 */
	expect_dec(&e, 10150, 2, RLT_MODE_NOW, RLT_DENY, 10299);
	assert_int_equal(dec(&e, 10299, 2, RLT_MODE_NOW, &at), RLT_GO);
	/* those 3 in sub-window 10 fade out over sub-window 20; idle, the limit is whole again */
	assert_int_equal(avail(&e, 19999), 7);
	assert_int_equal(avail(&e, 20000), 7);
	assert_int_equal(avail(&e, 20998), 9);
	assert_int_equal(avail(&e, 20999), 10);
	assert_int_equal(dec(&e, 22000, 10, RLT_MODE_NOW, &at), RLT_GO);
	unmk(&e);
}

static void sw_reserve_fifo(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 10, SW_W, NEVER);
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, 500, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	/* the k-th reservation needs k * 1000 + 10 * (999 - r) <= 10000: r >= 100 k - 1 */
	for (uint64_t k = 1; k <= 10; k++) {
		expect_dec(&e, 600, 1, RLT_MODE_RESERVE, RLT_WAIT, 10000 + 100 * k - 1);
	}
	/* the 11th: sub-window 10 is the oldest at 20000: 1000 + 10 * (999 - r) <= 10000 */
	expect_dec(&e, 600, 1, RLT_MODE_RESERVE, RLT_WAIT, 20099);
	/* a MODE_NOW call that would fit on its own cannot jump the queue */
	assert_int_equal(avail(&e, 15000), 0);
	assert_int_equal(dec(&e, 15000, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_true(at >= 20099);
	expect_dec(&e, 20099, 1, RLT_MODE_NOW, RLT_DENY, 20199); /* 2000 + 10 * (999 - r) <= 10000: r >= 199 */
	unmk(&e);
}

/* The true worst case (see sw_check): L at the last ns of a sub-window and, ten sub-windows
 * on, L - L/S more one ns before the oldest one's weight reaches 0: 2L - 1 in one period. */
static void sw_worst_case_two_limits(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 100, SW_W, NEVER);
	assert_int_equal(dec(&e, 999, 100, RLT_MODE_NOW, &at), RLT_GO);
	/* at 10998 the oldest weighs 1/1000: 100 / 1000 = 0.1, so 99 more */
	assert_int_equal(avail(&e, 10998), 99);
	assert_int_equal(dec(&e, 10998, 99, RLT_MODE_NOW, &at), RLT_GO);
	/* both lie in (998, 10998]: 199 = 2L - 1 in one period */
	expect_dec(&e, 10998, 1, RLT_MODE_NOW, RLT_DENY, 10999);
	unmk(&e);
}

static void sw_cost_above_limit(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 10, SW_W, NEVER);
	/* 25 on an empty period goes at once, charged whole */
	assert_int_equal(dec(&e, 0, 25, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(avail(&e, 9999), 0);
	/* 1000 + 25 * (999 - r) <= 10000: r >= 639 */
	expect_dec(&e, 5, 1, RLT_MODE_NOW, RLT_DENY, 10639);
	/* another large one waits until the estimate is 0: the last ns of sub-window 10 */
	expect_dec(&e, 5, 11, RLT_MODE_RESERVE, RLT_WAIT, 10999);
	/* and MODE_NOW gives its time too */
	expect_dec(&e, 11001, 11, RLT_MODE_NOW, RLT_DENY, 20999);
	/* 2^40 units and the largest cost: delayed, charged whole (saturated), never wrapped */
	assert_int_equal(dec(&e, 100000, 1ull << 40, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 100000, UINT64_MAX, RLT_MODE_RESERVE, RLT_WAIT, 110999);
	expect_dec(&e, 100000, UINT64_MAX, RLT_MODE_RESERVE, RLT_WAIT, 120999);
	expect_dec(&e, 100000, 1, RLT_MODE_RESERVE, RLT_WAIT, 130999);
	unmk(&e);
}

static void sw_refund_zero_still_clock(void **s)
{
	struct eng e;
	rlt_ns_t at, at2;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 10, SW_W, NEVER);
	assert_int_equal(dec(&e, 100, 5, RLT_MODE_NOW, &at), RLT_GO);
	refund(&e, at, 3);
	assert_int_equal(avail(&e, 100), 8);
	/* never below 0 */
	refund(&e, at, 30);
	assert_int_equal(avail(&e, 100), 10);
	/* a reservation given back frees its sub-window */
	for (int i = 0; i < 10; i++)
		assert_int_equal(dec(&e, 100, 1, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 200, 4, RLT_MODE_RESERVE, RLT_WAIT, 10399);
	refund(&e, at, 4);
	assert_int_equal(dec(&e, 200, 4, RLT_MODE_RESERVE, &at2), RLT_WAIT);
	assert_int_equal(at2, 10399);
	/* a refund for a sub-window whose slot was reused long ago does nothing */
	refund(&e, 100 + 32 * SW_S, 5);
	assert_int_equal(avail(&e, 10399), 0);
	/* cost 0 and a clock that does not move */
	expect_dec(&e, 10399, 0, RLT_MODE_NOW, RLT_GO, 10399);
	for (int i = 0; i < 50; i++) {
		expect_dec(&e, 10399, 1, RLT_MODE_NOW, RLT_DENY, 10499);
	}
	unmk(&e);
}

static void sw_max_wait_mode_ten_years(void **s)
{
	struct eng e;
	rlt_ns_t at, go, t = TEN_YEARS;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 10, SEC, 50 * MS);
	/* ten years on, 10/s: sub-windows of 100 ms */
	t = t / (100 * MS) * (100 * MS);
	assert_int_equal(dec(&e, t, 10, RLT_MODE_NOW, &at), RLT_GO);
	/* the next one fits at +1 s + 10 ms - 1 ns; 50 ms is the longest wait */
	go = t + SEC + 10 * MS - 1;
	expect_dec(&e, go - 50 * MS - 1, 1, RLT_MODE_RESERVE, RLT_DENY, go);
	expect_dec(&e, go - 50 * MS, 1, RLT_MODE_NOW, RLT_DENY, go);
	expect_dec(&e, go - 50 * MS, 1, RLT_MODE_RESERVE, RLT_WAIT, go);
	unmk(&e);
	/* near the end of time the search stops: denied, never wrapped */
	end_of_time(RLT_ALGO_SLIDING_WINDOW, 10, SW_W, UINT64_MAX - 2000);
}

static void sw_through_rlt_decide(void **s)
{
	struct pub u;
	rlt_ns_t at;
	(void)s;
	pub_mk(&u, RLT_ALGO_SLIDING_WINDOW, 10, SEC);
	assert_int_equal(u.p.sub_ns, 100 * MS);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC, 10, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(at, 6 * SEC + 10 * MS - 1);
	rlt_refund(&u.p, u.st, 5 * SEC, 1);
	assert_int_equal(rlt_available(&u.p, u.st, 5 * SEC), 1);
	pub_unmk(&u);
}

/* A process that dies holding a shared state's lock does not block the others (white box:
 * the lock is the state's first member). */
static void sw_shared_owner_dies(void **s)
{
	(void)s;
	shared_owner_dies(RLT_ALGO_SLIDING_WINDOW, 10, SW_W);
}

/*
 * The estimate at a time t from every admission at or before it, counted independently of the
 * engine: (sum of sub-windows x-9..x) * S + (count of x-10) * (S - 1 - r), in units of 1/S.
 */
static u128 sw_oracle_scaled(const uint64_t *cnt, uint64_t S, rlt_ns_t t)
{
	uint64_t x = t / S, r = t % S;
	u128 e = 0;

	for (uint64_t i = 0; i < 10 && i <= x; i++)
		e += (u128)cnt[x - i] * S;
	if (x >= 10)
		e += (u128)cnt[x - 10] * (S - 1 - r);
	return e;
}

/*
 * Checks a run's admissions (sorted by time, costs at most L): the estimate after each one
 * (all admissions up to its time counted) is at most L, and no period holds more than the true
 * worst case, derived so: take a period (t - 10S, t], t = x*S + r. E never rises between
 * admissions, so E <= L at all times. The period holds the admissions of x-9..x up to t, say A,
 * and part of old = count of x-10. At the last admission u <= t in x-9..x, E(u) <= L with old
 * weighing at least (S - 1 - r) / S, so A <= L - old * (S - 1 - r) / S; old <= L (E at the end
 * of x-10). Hence A + old <= L + old * (r + 1) / S, and x-10 has any ns inside only if
 * r <= S - 2: at most L + floor(L (S - 1) / S), i.e. 2L - 1 for S > L, not the 1.21 L that
 * evenly spread traffic gives. sw_worst_case_two_limits reaches it. Returns the largest count.
 */
static uint64_t sw_check(const struct adm *a, size_t n, uint64_t L, uint64_t S)
{
	uint64_t span = a[n - 1].t / S + 12, max = 0, sum = 0;
	uint64_t *cnt = calloc(span, sizeof *cnt);
	uint64_t bound = L + (uint64_t)((u128)L * (S - 1) / S);

	for (size_t i = 0; i < n; i++) {
		cnt[a[i].t / S] += a[i].c;
		if (i + 1 < n && a[i + 1].t == a[i].t)
			continue;
		assert_true(sw_oracle_scaled(cnt, S, a[i].t) <= (u128)L * S);
	}
	for (size_t i = 0, lo = 0; i < n; i++) {
		sum += a[i].c;
		while (a[lo].t + 10 * S <= a[i].t)
			sum -= a[lo++].c;
		if (sum > max)
			max = sum;
	}
	assert_true(max <= bound);
	free(cnt);
	return max;
}

/* The oracle's estimate at T, with C more, is within L (w->ctx: the counts per sub-window). */
static int sw_fits(const struct walk *w, rlt_ns_t t, uint64_t c)
{
	uint64_t S = w->W / 10;

	return sw_oracle_scaled(w->ctx, S, t) + (u128)c * S <= (u128)w->L * S;
}

/*
 * Random sequences: every admission keeps the estimate within L, any period holds at most the
 * worst case, go times never go back, and a denial's or reservation's time is the earliest:
 * the oracle's estimate admits the cost there and not one ns before.
 */
static void sw_property_random(void **s)
{
	uint64_t seed = 0x5eed0002, worst = 0, worst_L = 1;
	(void)s;
	for (int round = 0; round < 150; round++) {
		struct walk w;
		uint64_t L = rlt_test_range(&seed, 1, 60), S = rlt_test_range(&seed, 1, 5000);
		uint64_t W = 10 * S, *cnt, m;

		walk_begin(&w, &seed, RLT_ALGO_SLIDING_WINDOW, L, W, 3 * W, 100000, 3000);
		cnt = calloc((w.now + w.cap * 4 * W) / S + 64, sizeof *cnt);
		w.ctx = cnt;
		for (size_t i = 0; i < w.cap; i++) {
			uint64_t c = rlt_test_range(&seed, 1, L);
			enum rlt_mode md = walk_mode(&seed);
			enum rlt_verdict v;
			rlt_ns_t at;

			w.now += walk_step(&seed, L, W, 2 * W);
			v = dec(&w.e, w.now, c, md, &at);
			assert_true(at != NEVER);
			walk_earliest(&w, at, c, sw_fits);
			if (walk_admit(&w, v, at, c, md))
				cnt[at / S] += c;
		}
		m = sw_check(w.a, w.n, L, S);
		if (m * worst_L > worst * L) {
			worst = m;
			worst_L = L;
		}
		free(cnt);
		walk_end(&w);
	}
	print_message("sliding window: most in one period over random runs: %.3f L\n",
	              (double)worst / (double)worst_L);
}

static void sw_overload_rate(void **s)
{
	double r;
	(void)s;
	r = overload_rate(RLT_ALGO_SLIDING_WINDOW, 100, 10 * MS, 8, 1, 3);
	assert_true(r > 0.999 && r < 1.001);
	r = overload_rate(RLT_ALGO_SLIDING_WINDOW, 1000, SEC, 8, 1, 4);
	assert_true(r > 0.999 && r < 1.001);
	r = overload_rate(RLT_ALGO_SLIDING_WINDOW, 7, 10 * MS, 3, 1, 5);
	assert_true(r > 0.999 && r < 1.001);
}

static void sw_threads_exact(void **s)
{
	struct eng e;
	size_t n;
	struct adm *a;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_WINDOW, 1000, 20000, NEVER);
	a = run_threads(&e, 77, &n);
	assert_true(n > 0);
	sw_check(a, n, 1000, 2000);
	free(a);
	unmk(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sw_first_fill_deny_weight),
		cmocka_unit_test(sw_reserve_fifo),
		cmocka_unit_test(sw_worst_case_two_limits),
		cmocka_unit_test(sw_cost_above_limit),
		cmocka_unit_test(sw_refund_zero_still_clock),
		cmocka_unit_test(sw_max_wait_mode_ten_years),
		cmocka_unit_test(sw_through_rlt_decide),
		cmocka_unit_test(sw_shared_owner_dies),
		cmocka_unit_test(sw_property_random),
		cmocka_unit_test(sw_overload_rate),
		cmocka_unit_test(sw_threads_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
