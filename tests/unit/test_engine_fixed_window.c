/* test_engine_fixed_window.c: src/engine_window.c's fixed window against a fake clock, to the
 * nanosecond (the sliding window: test_engine_sliding_window.c). */
#include <stdlib.h>
#include <string.h>

#include "engine_harness.h"

#define FW_W (1 * MS)
#define FW_T0 (1000 * FW_W) /* an arbitrary window start */

static void fw_first_fill_deny_rollover(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 5, FW_W, NEVER);
	/* zeroed memory is a valid state too */
	memset(e.state, 0, e.ops->state_size(&e.p));
	assert_int_equal(avail(&e, FW_T0 + 123), 5);
	expect_dec(&e, FW_T0 + 123, 1, RLT_MODE_NOW, RLT_GO, FW_T0 + 123);
	assert_int_equal(avail(&e, FW_T0 + 123), 4);
	for (int i = 0; i < 4; i++) {
		expect_dec(&e, FW_T0 + 200 + i, 1, RLT_MODE_NOW, RLT_GO, FW_T0 + 200 + i);
	}
	assert_int_equal(avail(&e, FW_T0 + 300), 0);
	expect_dec(&e, FW_T0 + 300, 1, RLT_MODE_NOW, RLT_DENY, FW_T0 + FW_W);
	/* the last ns of the window is still too early; the first of the next conforms */
	expect_dec(&e, FW_T0 + FW_W - 1, 1, RLT_MODE_NOW, RLT_DENY, FW_T0 + FW_W);
	assert_int_equal(avail(&e, FW_T0 + FW_W), 5);
	expect_dec(&e, FW_T0 + FW_W, 5, RLT_MODE_NOW, RLT_GO, FW_T0 + FW_W);
	expect_dec(&e, FW_T0 + FW_W, 1, RLT_MODE_NOW, RLT_DENY, FW_T0 + 2 * FW_W);
	/* a cost that does not fit in what is left waits for the next window */
	assert_int_equal(dec(&e, FW_T0 + 2 * FW_W, 3, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, FW_T0 + 2 * FW_W + 1, 3, RLT_MODE_NOW, RLT_DENY, FW_T0 + 3 * FW_W);
	assert_int_equal(dec(&e, FW_T0 + 2 * FW_W + 1, 2, RLT_MODE_NOW, &at), RLT_GO);
	unmk(&e);
}

static void fw_reserve_fifo_and_steady(void **s)
{
	struct eng e;
	rlt_ns_t at, prev = 0;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 4, FW_W, NEVER);
	/* 13 reservations at one instant: 4 now, 4 at each of the next windows, in order */
	for (int i = 0; i < 13; i++) {
		enum rlt_verdict v = dec(&e, FW_T0 + 7, 1, RLT_MODE_RESERVE, &at);
		assert_int_equal(v, i < 4 ? RLT_GO : RLT_WAIT);
		assert_int_equal(at, i < 4 ? FW_T0 + 7 : FW_T0 + (uint64_t)(i / 4) * FW_W);
		assert_true(at >= prev);
		prev = at;
	}
	/* a pending reservation keeps a MODE_NOW call out even in a later window */
	expect_dec(&e, FW_T0 + 3 * FW_W + 5, 4, RLT_MODE_NOW, RLT_DENY, FW_T0 + 4 * FW_W);
	assert_int_equal(dec(&e, FW_T0 + 3 * FW_W + 5, 3, RLT_MODE_NOW, &at), RLT_GO);
	/* steady: one call every W/4 all go; idle for 100 windows and the limit is whole again */
	for (uint64_t t = FW_T0 + 10 * FW_W; t < FW_T0 + 20 * FW_W; t += FW_W / 4)
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(avail(&e, FW_T0 + 120 * FW_W), 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(dec(&e, FW_T0 + 120 * FW_W, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(dec(&e, FW_T0 + 120 * FW_W, 1, RLT_MODE_NOW, &at), RLT_DENY);
	unmk(&e);
}

static void fw_cost_above_limit(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 5, FW_W, NEVER);
	/* 12 units at the start of an empty window go at once and take 2.4 windows */
	expect_dec(&e, FW_T0 + 100, 12, RLT_MODE_NOW, RLT_GO, FW_T0 + 100);
	assert_int_equal(avail(&e, FW_T0 + FW_W), 0);
	assert_int_equal(avail(&e, FW_T0 + 2 * FW_W), 3);
	expect_dec(&e, FW_T0 + 200, 1, RLT_MODE_NOW, RLT_DENY, FW_T0 + 2 * FW_W);
	assert_int_equal(dec(&e, FW_T0 + 2 * FW_W, 3, RLT_MODE_NOW, &at), RLT_GO);
	/* with part of the window taken, a large call starts at the next boundary */
	assert_int_equal(dec(&e, FW_T0 + 3 * FW_W, 1, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, FW_T0 + 3 * FW_W, 6, RLT_MODE_RESERVE, RLT_WAIT, FW_T0 + 4 * FW_W);
	expect_dec(&e, FW_T0 + 3 * FW_W, 1, RLT_MODE_RESERVE, RLT_WAIT, FW_T0 + 5 * FW_W);
	/* 2^40 units: still a window start; the next call waits 2^40/5 windows */
	assert_int_equal(dec(&e, FW_T0 + 100 * FW_W, 1ull << 40, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, FW_T0 + 100 * FW_W, 1, RLT_MODE_RESERVE, RLT_WAIT, FW_T0 + (100 + (1ull << 40) / 5) * FW_W);
	/* a cost whose positions would pass 2^64 is refused, never wrapped */
	expect_dec(&e, FW_T0, UINT64_MAX, RLT_MODE_RESERVE, RLT_DENY, NEVER);
	unmk(&e);
}

static void fw_refund_same_and_cross_window(void **s)
{
	struct eng e;
	rlt_ns_t at, at2;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 10, FW_W, NEVER);
	assert_int_equal(dec(&e, FW_T0 + 5, 6, RLT_MODE_NOW, &at), RLT_GO);
	refund(&e, at, 4);
	assert_int_equal(avail(&e, FW_T0 + 6), 8);
	/* never below the window's start, whatever is given back */
	refund(&e, at, 100);
	assert_int_equal(avail(&e, FW_T0 + 6), 10);
	/* fill this window and reserve into the next: s lies in the next window */
	assert_int_equal(dec(&e, FW_T0 + 7, 10, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(dec(&e, FW_T0 + 8, 7, RLT_MODE_RESERVE, &at2), RLT_WAIT);
	assert_int_equal(at2, FW_T0 + FW_W);
	/* window 1 takes 3 more and is full; s is exactly at its end: a refund still applies */
	assert_int_equal(dec(&e, FW_T0 + 9, 3, RLT_MODE_RESERVE, &at2), RLT_WAIT);
	assert_int_equal(at2, FW_T0 + FW_W);
	refund(&e, at2, 3);
	assert_int_equal(dec(&e, FW_T0 + 9, 3, RLT_MODE_RESERVE, &at2), RLT_WAIT);
	assert_int_equal(at2, FW_T0 + FW_W);
	/* 4 do not fit: window 2, and s lies there now */
	expect_dec(&e, FW_T0 + 9, 4, RLT_MODE_RESERVE, RLT_WAIT, FW_T0 + 2 * FW_W);
	/* a refund of window 1's call is a no-op now: the 4 were pushed to window 2 assuming
	 * window 1 was full, so freeing its positions would let window 2 pass L */
	refund(&e, at2, 3);
	assert_int_equal(avail(&e, FW_T0 + FW_W), 0);
	assert_int_equal(avail(&e, FW_T0 + 2 * FW_W), 6);
	/* and so is a refund of window 0's */
	refund(&e, FW_T0 + 7, 10);
	assert_int_equal(avail(&e, FW_T0 + 2 * FW_W), 6);
	/* zero units: nothing */
	refund(&e, at, 0);
	assert_int_equal(avail(&e, FW_T0 + FW_W), 0);
	unmk(&e);
}

static void fw_zero_cost_still_clock_max_wait(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 3, FW_W, FW_W / 2);
	/* cost 0 goes and takes nothing, even in a full window */
	for (int i = 0; i < 3; i++)
		assert_int_equal(dec(&e, FW_T0, 1, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, FW_T0, 0, RLT_MODE_NOW, RLT_GO, FW_T0);
	/* a clock that does not move: the same answer every time, nothing taken */
	for (int i = 0; i < 100; i++) {
		expect_dec(&e, FW_T0, 1, RLT_MODE_NOW, RLT_DENY, FW_T0 + FW_W);
	}
	/* max-wait W/2: one ns too far is a denial with the time; exactly W/2 waits */
	expect_dec(&e, FW_T0 + FW_W / 2 - 1, 1, RLT_MODE_RESERVE, RLT_DENY, FW_T0 + FW_W);
	expect_dec(&e, FW_T0 + FW_W / 2, 1, RLT_MODE_RESERVE, RLT_WAIT, FW_T0 + FW_W);
	unmk(&e);
}

static void fw_ten_years_and_overflow(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	/* 1e6/s, ten years on: positions 3.15e14, exact */
	mk(&e, RLT_ALGO_FIXED_WINDOW, 1000000, SEC, NEVER);
	assert_int_equal(dec(&e, TEN_YEARS + 1, 999999, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, TEN_YEARS + 2, 2, RLT_MODE_RESERVE, RLT_WAIT, TEN_YEARS + SEC);
	assert_int_equal(avail(&e, TEN_YEARS + SEC), 999998);
	unmk(&e);
	/* 16 units per ns (the highest rate) near the end of time: refused, not wrapped */
	mk(&e, RLT_ALGO_FIXED_WINDOW, 16, 1, NEVER);
	expect_dec(&e, UINT64_MAX - 5, 1, RLT_MODE_NOW, RLT_DENY, NEVER);
	assert_int_equal(avail(&e, UINT64_MAX - 5), 0);
	refund(&e, UINT64_MAX - 5, 1);
	assert_int_equal(dec(&e, TEN_YEARS, 16, RLT_MODE_NOW, &at), RLT_GO);
	unmk(&e);
	/* a slow rule at a clock reading near 2^64: the next window would start past the end */
	end_of_time(RLT_ALGO_FIXED_WINDOW, 1, SEC, UINT64_MAX - 5);
}

static void fw_through_rlt_decide(void **s)
{
	struct pub u;
	rlt_ns_t at;
	(void)s;
	/* 120/min algo=fixed-window */
	pub_mk(&u, RLT_ALGO_FIXED_WINDOW, 120, 60 * SEC);
	assert_int_equal(u.p.limit, 120);
	assert_true(rlt_state_size(&u.p) <= 64);
	for (int i = 0; i < 120; i++)
		assert_int_equal(rlt_decide(&u.p, u.st, 61 * SEC, 1, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&u.p, u.st, 61 * SEC, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(at, 120 * SEC);
	assert_int_equal(rlt_decide(&u.p, u.st, 61 * SEC, 0, RLT_MODE_NOW, &at), RLT_GO);
	rlt_refund(&u.p, u.st, 61 * SEC, 1);
	assert_int_equal(rlt_available(&u.p, u.st, 62 * SEC), 1);
	assert_int_equal(rlt_decide(&u.p, u.st, 61 * SEC, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&u.p, u.st, 61 * SEC, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, 120 * SEC);
	pub_unmk(&u);
}

/*
 * Random (step, cost, mode) sequences: admitted units by go time in every aligned window are at
 * most L (a call above L is alone in its window's admissions), go times never go back (FIFO),
 * and a MODE_NOW denial's time is exact: asked again then, on the same state, it goes.
 */
static void fw_property_random(void **s)
{
	uint64_t seed = 0x5eed0001;
	(void)s;
	for (int round = 0; round < 200; round++) {
		struct walk w;
		uint64_t L = rlt_test_range(&seed, 1, 40), W = rlt_test_range(&seed, 10, 100000);

		walk_begin(&w, &seed, RLT_ALGO_FIXED_WINDOW, L, W, 3 * W, 1000000, 3000);
		for (size_t i = 0; i < w.cap; i++) {
			uint64_t c = rlt_test_range(&seed, 0, 20) == 0 ? rlt_test_range(&seed, L, 3 * L)
			                                               : rlt_test_range(&seed, 1, L);
			enum rlt_mode m = walk_mode(&seed);
			enum rlt_verdict v;
			rlt_ns_t at;
			uint64_t saved = *(uint64_t *)w.e.state;

			w.now += walk_step(&seed, L, W, 3 * W);
			v = dec(&w.e, w.now, c, m, &at);
			if (v == RLT_DENY) {
				rlt_ns_t at2;
				uint64_t after = *(uint64_t *)w.e.state;

				assert_int_equal(after, saved);
				assert_true(at != NEVER && at > w.now);
				if (m == RLT_MODE_NOW) {
					assert_int_equal(dec(&w.e, at, c, RLT_MODE_NOW, &at2), RLT_GO);
					*(uint64_t *)w.e.state = saved;
					assert_int_equal(dec(&w.e, at - 1, c, RLT_MODE_NOW, &at2), RLT_DENY);
				}
			}
			walk_admit(&w, v, at, c, m);
		}
		for (size_t i = 0; i < w.n;) {
			uint64_t win = w.a[i].t / W, sum = 0, calls = 0, big = 0;

			for (; i < w.n && w.a[i].t / W == win; i++) {
				sum += w.a[i].c;
				calls++;
				big += w.a[i].c > L;
			}
			if (big)
				assert_int_equal(calls, 1);
			else
				assert_true(sum <= L);
		}
		walk_end(&w);
	}
}

static void fw_overload_rate(void **s)
{
	double r;
	(void)s;
	r = overload_rate(RLT_ALGO_FIXED_WINDOW, 100, 10 * MS, 8, 1, 1);
	assert_true(r > 0.999 && r < 1.001);
	/* costs that do not divide the window waste its tail: whole calls only */
	r = overload_rate(RLT_ALGO_FIXED_WINDOW, 1000, 10 * MS, 8, 3, 2);
	assert_true(r > 0.99 && r <= 1.0);
}

/* ---------------------------------------------------------------------------------------------
 * Threads: 8 x 20,000 MODE_NOW decisions on one state, a fake clock in a shared atomic.
 * ------------------------------------------------------------------------------------------- */

static void fw_threads_exact(void **s)
{
	struct eng e;
	size_t n, windows = 0;
	uint64_t total = 0;
	struct adm *a;
	(void)s;
	mk(&e, RLT_ALGO_FIXED_WINDOW, 1000, 20000, NEVER);
	a = run_threads(&e, 77, &n);
	for (size_t i = 0; i < n;) {
		uint64_t w = a[i].t / 20000, sum = 0;

		for (; i < n && a[i].t / 20000 == w; i++)
			sum += a[i].c;
		assert_true(sum <= 1000);
		total += sum;
		windows++;
	}
	/* overloaded (about 3x): most windows fill */
	assert_true(total > 900 * windows);
	free(a);
	unmk(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fw_first_fill_deny_rollover),
		cmocka_unit_test(fw_reserve_fifo_and_steady),
		cmocka_unit_test(fw_cost_above_limit),
		cmocka_unit_test(fw_refund_same_and_cross_window),
		cmocka_unit_test(fw_zero_cost_still_clock_max_wait),
		cmocka_unit_test(fw_ten_years_and_overflow),
		cmocka_unit_test(fw_through_rlt_decide),
		cmocka_unit_test(fw_property_random),
		cmocka_unit_test(fw_overload_rate),
		cmocka_unit_test(fw_threads_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
