/* test_engine_log.c: the sliding log against a fake clock, to the nanosecond. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_harness.h"


static const struct rlt__engine_ops *const ops = &rlt__engine_sliding_log;

static void log_first_fill_deny_expire(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 5, 1000, NEVER);
	assert_int_equal(avail(&e, 50), 5);
	for (int i = 1; i <= 5; i++) {
		expect_dec(&e, 100 * (uint64_t)i, 1, RLT_MODE_NOW, RLT_GO, 100 * (uint64_t)i);
	}
	assert_int_equal(avail(&e, 600), 0);
	/* the call at 100 leaves the period (t - 1000, t] at t = 1100, not one ns before */
	expect_dec(&e, 600, 1, RLT_MODE_NOW, RLT_DENY, 1100);
	expect_dec(&e, 1099, 1, RLT_MODE_NOW, RLT_DENY, 1100);
	assert_int_equal(avail(&e, 1099), 0);
	assert_int_equal(avail(&e, 1100), 1);
	assert_int_equal(dec(&e, 1100, 1, RLT_MODE_NOW, &at), RLT_GO);
	/* three at once need the calls at 200, 300 and 400 gone: 1400 */
	expect_dec(&e, 1150, 3, RLT_MODE_NOW, RLT_DENY, 1400);
	/* steady: one every 200 ns goes forever */
	for (uint64_t t = 1500; t < 100000; t += 200)
		assert_int_equal(dec(&e, t, 1, RLT_MODE_NOW, &at), RLT_GO);
	/* idle: after a quiet period the whole limit is back, at once */
	assert_int_equal(avail(&e, 200000), 5);
	assert_int_equal(dec(&e, 200000, 5, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 200000, 1, RLT_MODE_NOW, RLT_DENY, 201000);
	unmk(&e);
}

static void log_reserve_fifo_max_wait(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 5, 1000, 350);
	for (int i = 1; i <= 5; i++)
		assert_int_equal(dec(&e, 100 * (uint64_t)i, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	/* reservations queue behind one another, each when the next entry leaves */
	expect_dec(&e, 800, 1, RLT_MODE_RESERVE, RLT_WAIT, 1100);
	expect_dec(&e, 900, 1, RLT_MODE_RESERVE, RLT_WAIT, 1200);
	expect_dec(&e, 1000, 1, RLT_MODE_RESERVE, RLT_WAIT, 1300);
	/* the next would wait 351 ns: past max-wait, denied with its time, nothing taken */
	expect_dec(&e, 1049, 1, RLT_MODE_RESERVE, RLT_DENY, 1400);
	expect_dec(&e, 1050, 1, RLT_MODE_RESERVE, RLT_WAIT, 1400);
	/* a MODE_NOW call cannot jump the queue */
	assert_int_equal(avail(&e, 1100), 0);
	expect_dec(&e, 1100, 1, RLT_MODE_NOW, RLT_DENY, 1500);
	/* a clock that does not move: the same answer, nothing taken */
	for (int i = 0; i < 100; i++) {
		expect_dec(&e, 1100, 1, RLT_MODE_NOW, RLT_DENY, 1500);
	}
	assert_int_equal(dec(&e, 1500, 1, RLT_MODE_NOW, &at), RLT_GO);
	unmk(&e);
}

static void log_costs_zero_limit_above(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 5, 1000, NEVER);
	/* cost 0 goes and takes nothing */
	expect_dec(&e, 10, 0, RLT_MODE_NOW, RLT_GO, 10);
	assert_int_equal(avail(&e, 10), 5);
	/* a cost above the limit can never conform: denied at once, nothing taken */
	expect_dec(&e, 10, 6, RLT_MODE_RESERVE, RLT_DENY, NEVER);
	expect_dec(&e, 10, 1ull << 40, RLT_MODE_RESERVE, RLT_DENY, NEVER);
	expect_dec(&e, 10, UINT64_MAX, RLT_MODE_NOW, RLT_DENY, NEVER);
	assert_int_equal(avail(&e, 10), 5);
	/* the whole limit at once is fine; a multi-unit call frees all its units together */
	assert_int_equal(dec(&e, 10, 5, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 20, 2, RLT_MODE_RESERVE, RLT_WAIT, 1010);
	expect_dec(&e, 20, 4, RLT_MODE_RESERVE, RLT_WAIT, 2010); /* 2 at 1010 + 4 > 5 until the 2 leave */
	unmk(&e);
}

static void log_refund_and_compaction(void **s)
{
	struct eng e;
	rlt_ns_t at, a1, a2, a3;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 5, 1000, NEVER);
	assert_int_equal(dec(&e, 10, 3, RLT_MODE_NOW, &at), RLT_GO);
	refund(&e, at, 2);
	assert_int_equal(avail(&e, 11), 4);
	/* never below 0; a time with no entry is a no-op */
	refund(&e, at, 10);
	assert_int_equal(avail(&e, 11), 5);
	refund(&e, 12345, 1);
	assert_int_equal(avail(&e, 11), 5);
	/* a reservation given back lets the next take its place */
	assert_int_equal(dec(&e, 20, 5, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 30, 2, RLT_MODE_RESERVE, RLT_WAIT, 1020);
	refund(&e, at, 2);
	expect_dec(&e, 30, 2, RLT_MODE_RESERVE, RLT_WAIT, 1020);
	unmk(&e);

	/* a ring full of entries refunded to 0 is compacted to make room */
	mk(&e, RLT_ALGO_SLIDING_LOG, 3, 1000, NEVER);
	assert_int_equal(dec(&e, 1, 1, RLT_MODE_NOW, &a1), RLT_GO);
	assert_int_equal(dec(&e, 2, 1, RLT_MODE_NOW, &a2), RLT_GO);
	assert_int_equal(dec(&e, 3, 1, RLT_MODE_NOW, &a3), RLT_GO);
	refund(&e, a2, 1);
	refund(&e, a3, 1);
	assert_int_equal(avail(&e, 4), 2);
	assert_int_equal(dec(&e, 4, 2, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 4, 1, RLT_MODE_NOW, RLT_DENY, 1001);
	/* entries refunded after compaction are still found by time */
	refund(&e, 4, 1);
	assert_int_equal(dec(&e, 5, 1, RLT_MODE_NOW, &at), RLT_GO);
	refund(&e, a1, 1);
	assert_int_equal(avail(&e, 6), 1);
	expect_dec(&e, 1004, 3, RLT_MODE_NOW, RLT_DENY, 1005);
	unmk(&e);
}

static void log_ten_years_and_end_of_time(void **s)
{
	struct eng e;
	rlt_ns_t at;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 100, SEC, NEVER);
	assert_int_equal(dec(&e, TEN_YEARS + 7, 100, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, TEN_YEARS + 8, 1, RLT_MODE_RESERVE, RLT_WAIT, TEN_YEARS + SEC + 7);
	unmk(&e);
	/* an entry that would leave the period past 2^64: never, not wrapped */
	end_of_time(RLT_ALGO_SLIDING_LOG, 1, SEC, UINT64_MAX - 5);
}

static void log_largest_limit_and_init(void **s)
{
	struct eng e;
	struct rlt_params p;
	rlt_ns_t at;
	(void)s;
	/* 1,000,000 calls in a second: the ring is exactly full, and entries leave in order */
	mk(&e, RLT_ALGO_SLIDING_LOG, RLT_LOG_MAX_LIMIT, SEC, NEVER);
	for (uint64_t i = 0; i < RLT_LOG_MAX_LIMIT; i++)
		assert_int_equal(dec(&e, SEC + i, 1, RLT_MODE_NOW, &at), RLT_GO);
	expect_dec(&e, 2 * SEC - 1, 1, RLT_MODE_NOW, RLT_DENY, 2 * SEC);
	assert_int_equal(dec(&e, 2 * SEC + 9, 10, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(avail(&e, 2 * SEC + 9), 0);
	assert_int_equal(avail(&e, 2 * SEC + 10), 1);
	unmk(&e);
	/* more than that is refused */
	memset(&p, 0, sizeof p);
	p.algo = RLT_ALGO_SLIDING_LOG;
	p.limit = RLT_LOG_MAX_LIMIT + 1;
	p.window_ns = SEC;
	{
		_Alignas(64) unsigned char st[4096];
		assert_true(ops->state_size(&p) <= sizeof st);
		assert_int_equal(ops->init(&p, st, 0), -EINVAL);
	}
}

static void log_through_rlt_decide(void **s)
{
	struct pub u;
	rlt_ns_t at;
	(void)s;
	/* 300msg/s algo=sliding-log */
	pub_mk(&u, RLT_ALGO_SLIDING_LOG, 300, SEC);
	assert_int_equal(u.p.limit, 300);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC, 300, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC + 1, 1, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(at, 6 * SEC);
	rlt_refund(&u.p, u.st, 5 * SEC, 1);
	assert_int_equal(rlt_available(&u.p, u.st, 5 * SEC + 2), 1);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC + 3, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&u.p, u.st, 5 * SEC + 3, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, 6 * SEC);
	pub_unmk(&u);
}

/* A process that dies holding a shared state's lock does not block the others, and the
 * running total is rebuilt (white box: the lock is the state's first member). */
static void log_shared_owner_dies(void **s)
{
	(void)s;
	/* and the running total is rebuilt: the denial is for when the first 4 leave */
	assert_int_equal(shared_owner_dies(RLT_ALGO_SLIDING_LOG, 10, 1000), 1100);
}


/* Units of the admissions a[0..n) in (t - W, t]. */
static uint64_t live_at(const struct adm *a, size_t n, uint64_t W, rlt_ns_t t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (a[i].t <= t && (t < W || a[i].t > t - W))
			sum += a[i].c;
	return sum;
}

/* Largest count in any window-length period, over admissions sorted by time. */
static uint64_t max_in_period(const struct adm *a, size_t n, uint64_t W)
{
	uint64_t sum = 0, max = 0;

	for (size_t i = 0, lo = 0; i < n; i++) {
		sum += a[i].c;
		while (a[lo].t + W <= a[i].t)
			sum -= a[lo++].c;
		if (sum > max)
			max = sum;
	}
	return max;
}

/* The admissions so far leave room for C at T: what is in (T - W, T] plus C is at most L. */
static int log_fits(const struct walk *w, rlt_ns_t t, uint64_t c)
{
	return live_at(w->a, w->n, w->W, t) + c <= w->L;
}

/*
 * Random sequences (steps, costs, modes, refunds): any window-length period holds at most L
 * (brute force over all go times), go times never go back, and every time the engine gives
 * (a go, a reservation, a denial's) is the earliest one: the admissions conform there and not
 * one ns before.
 */
static void log_property_random(void **s)
{
	uint64_t seed = 0x5eed0003;
	(void)s;
	for (int round = 0; round < 150; round++) {
		struct walk w;
		uint64_t L = rlt_test_range(&seed, 1, 40), W = rlt_test_range(&seed, 1, 100000);

		walk_begin(&w, &seed, RLT_ALGO_SLIDING_LOG, L, W, 2 * W, 1000000, 2000);
		for (size_t i = 0; i < w.cap; i++) {
			uint64_t c = rlt_test_range(&seed, 1, L + (L > 4 ? L / 4 : 1));
			enum rlt_mode md = walk_mode(&seed);
			enum rlt_verdict v;
			rlt_ns_t at;

			w.now += walk_step(&seed, L, W, 2 * W);
			v = dec(&w.e, w.now, c, md, &at);
			if (c > L) {
				assert_int_equal(v, RLT_DENY);
				assert_int_equal(at, NEVER);
				continue;
			}
			walk_earliest(&w, at, c, log_fits);
			/* now and then a short call gives part back */
			if (walk_admit(&w, v, at, c, md) && rlt_test_range(&seed, 0, 9) == 0) {
				uint64_t back = rlt_test_range(&seed, 1, c);

				refund(&w.e, at, back);
				w.a[w.n - 1].c -= back;
			}
		}
		assert_true(max_in_period(w.a, w.n, W) <= L);
		walk_end(&w);
	}
}

/* Callers that reserve, wait for their time and ask again: exactly L per window long-run. */
static void log_overload_rate(void **s)
{
	static const uint64_t Ls[] = { 7, 100, 1000 };
	(void)s;
	for (int k = 0; k < 3; k++) {
		double r = overload_rate(RLT_ALGO_SLIDING_LOG, Ls[k], 10 * MS, 8, 1, 9 + (uint64_t)k);

		assert_true(r > 0.999 && r < 1.001);
	}
}

static void log_threads_exact(void **s)
{
	struct eng e;
	size_t n = 0;
	struct adm *all;
	(void)s;
	mk(&e, RLT_ALGO_SLIDING_LOG, 1000, 20000, NEVER);
	all = run_threads(&e, 99, &n);
	assert_true(n > 0);
	/* exact: no period of 20 us holds more than 1000; overloaded, some come close */
	assert_true(max_in_period(all, n, 20000) <= 1000);
	assert_true(max_in_period(all, n, 20000) >= 990);
	free(all);
	unmk(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_first_fill_deny_expire),
		cmocka_unit_test(log_reserve_fifo_max_wait),
		cmocka_unit_test(log_costs_zero_limit_above),
		cmocka_unit_test(log_refund_and_compaction),
		cmocka_unit_test(log_ten_years_and_end_of_time),
		cmocka_unit_test(log_largest_limit_and_init),
		cmocka_unit_test(log_through_rlt_decide),
		cmocka_unit_test(log_shared_owner_dies),
		cmocka_unit_test(log_property_random),
		cmocka_unit_test(log_overload_rate),
		cmocka_unit_test(log_threads_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
