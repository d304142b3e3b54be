/* test_rule_set.c: `rlthrottle set` in the core. The engines' side with a fake clock (they take
 * `now`): a state carried over as a share of the burst (rlthrottle(1) COMMANDS: a lowered rate goes on at
 * once, a raise passes no more than its burst, a waiting call keeps its units, a dry-run's lag
 * and a saturated time never carry), what cannot change. Then a ruleset's side: the rule swapped, a waiting
 * ticket moved, the refusals (nothing changed). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "charge.h"
#include "pacing.h"
#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "publish.h"
#include "rule_set.h"
#include "shm_set.h"
#include "scope_shm.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

#define MS 1000000ull
#define SEC 1000000000ull

static struct rlt_params params(enum rlt_algo a, uint64_t per_sec, uint64_t burst)
{
	struct rlt_params p;
	struct rlt_error e;
	if (rlt_params_init(&p, a, per_sec, 1, SEC, burst, RLT_NS_NEVER, &e) != 0)
		fail_msg("params: %s", e.msg);
	return p;
}

/* 1000 units/s burst 100: 100 go at 0, 500 more wait until 0.5 s. Lowered to 100/s at 0.1 s:
 * the 400 units still ahead of the waiter take 4 s, so the reservation moves to 4.1 s and a
 * newcomer queues behind it at the new rate. */
static void lower_keeps_the_queue(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, 1000, 100), b = params(RLT_ALGO_TOKEN, 100, 100);
	_Atomic uint64_t st = 0, nst, cst;
	rlt_ns_t at, t0 = 10 * SEC;

	assert_int_equal(rlt_decide(&a, &st, t0, 100, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, 500, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 500 * MS);
	assert_int_equal(rlt_params_retune(&b, &a, t0 + 100 * MS, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0 + 100 * MS, 0), 0);
	assert_int_equal(rlt_params_remap(&a, &b, t0 + 100 * MS, at, 1), t0 + 4100 * MS);
	assert_int_equal(rlt_decide(&b, &nst, t0 + 100 * MS, 10, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 4200 * MS);
	/* and raised again: the queue drains at 1000/s once more */
	struct rlt_params c = params(RLT_ALGO_TOKEN, 1000, 100);
	assert_int_equal(rlt_params_retune(&c, &b, t0 + 1100 * MS, NULL), 1);
	assert_int_equal(rlt_state_carry(&b, &nst, &c, &cst, t0 + 1100 * MS, 0), 0);
	/* at 1.1 s under b, 100 of the 510 units ahead of 0.1 s have drained: 410 - 100 = 310 ahead
	 * of the end of the burst, 0.31 s at 1000/s */
	assert_int_equal(rlt_params_remap(&b, &c, t0 + 1100 * MS, at, 1), t0 + 1410 * MS);
	/* max-wait alone keeps the params and the state */
	struct rlt_params d = params(RLT_ALGO_TOKEN, 1000, 100);
	d.max_wait_ns = SEC;
	assert_int_equal(rlt_params_retune(&d, &c, t0 + 1200 * MS, NULL), 0);
	assert_int_equal(d.tick_num, c.tick_num);
	assert_int_equal(d.max_wait_ns, SEC);
}

/* A set from rule A to rule B (ALGO, rates and bursts) at t0 with calls waiting: FIRST units
 * go and SECOND wait until t0 + A_WAIT under A; B takes over (a retune, the state carried), the
 * time A gave maps to t0 + REMAPPED, and one more unit under B waits until t0 + B_WAIT. */
struct carry {
	enum rlt_algo algo;
	uint64_t a_rate, a_burst, b_rate, b_burst, first, second;
	rlt_ns_t t0, a_wait, remapped, b_wait;
};

static void carried(const struct carry *c)
{
	struct rlt_params a = params(c->algo, c->a_rate, c->a_burst);
	struct rlt_params b = params(c->algo, c->b_rate, c->b_burst);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, t0 = c->t0;

	assert_int_equal(rlt_decide(&a, &st, t0, c->first, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, c->second, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + c->a_wait);
	assert_int_equal(rlt_params_retune(&b, &a, t0, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0, 0), 0);
	assert_int_equal(rlt_params_remap(&a, &b, t0, at, 1), t0 + c->remapped);
	assert_int_equal(rlt_decide(&b, &nst, t0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + c->b_wait);
}

/* A rate far above the first (10/s -> 100000/s): the 50 units ahead at the set are still
 * ahead, now 0.5 ms worth. */
static void raise_carries_the_state(void **s)
{
	(void)s;
	carried(&(struct carry){.algo = RLT_ALGO_TOKEN, .a_rate = 10, .a_burst = 1, .b_rate = 100000,
	                        .b_burst = 1, .t0 = 20 * SEC, .first = 1, .second = 50,
	                        .a_wait = 5 * SEC, .remapped = 500000, .b_wait = 510000});
}

/* An idle bucket is full: carried into a smaller burst it is full at that burst, no more. */
static void a_credit_stays_within_the_new_burst(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, 10, 1000), b = params(RLT_ALGO_TOKEN, 1000000, 5);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, t0 = 1000 * SEC;

	assert_int_equal(rlt_params_retune(&b, &a, t0, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0, 0), 0);
	assert_int_equal(rlt_decide(&b, &nst, t0, 5, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&b, &nst, t0, 1, RLT_MODE_NOW, &at), RLT_DENY);
}

#define KiB 1024ull
#define MiB (1024ull * 1024)

/* Issue 17 row 7: a sender at 1 MiB/s (burst 1 MiB, emptied) waits for its next 10 KiB; the
 * rule becomes 200 KiB/s burst 16 KiB. The emptied burst is an emptied 16 KiB (a share), not
 * 1 MiB owed at 200 KiB/s (a 5 s stall): the waiter's 10 KiB go at the new rate (50 ms), and
 * the next piece (2 KiB, 10 ms at the new rate) right after, at the rate. */
static void lowering_keeps_a_share_of_the_burst(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, MiB, 0), b = params(RLT_ALGO_TOKEN, 200 * KiB, 16 * KiB);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, go, t0 = 50 * SEC, t1 = t0 + 2 * MS;

	assert_int_equal(rlt_decide(&a, &st, t0, MiB, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, 10 * KiB, RLT_MODE_RESERVE, &go), RLT_WAIT);
	assert_true(go > t0 + 9 * MS && go < t0 + 10 * MS);
	assert_int_equal(rlt_params_retune(&b, &a, t1, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t1, 0), 0);
	/* 10 KiB less the 2 ms that passed (about 2 KiB) at 200 KiB/s: some 40 ms */
	go = rlt_params_remap(&a, &b, t1, go, 1);
	assert_true(go > t1 + 35 * MS && go < t1 + 45 * MS);
	assert_int_equal(rlt_decide(&b, &nst, go, 2 * KiB, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_true(at <= go + 10 * MS + 1);
}

/* Issue 17 row 15: 1 MiB/s emptied, raised to 2 MiB/s (burst 2 MiB): still empty, so 1 MiB
 * does not go at once (before: the old burst's emptiness, 1 MiB in units, left 1 MiB of the
 * new burst to pass); it goes at the new rate. An idle bucket raised is full at the new burst
 * and no more; a half-used one has half of the new burst. */
static void raising_never_passes_more_than_the_new_burst(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, MiB, 0), b = params(RLT_ALGO_TOKEN, 2 * MiB, 0);
	rlt_ns_t at, t0 = 60 * SEC;

	for (int used = 0; used <= 2; used++) { /* emptied, idle, half used */
		_Atomic uint64_t st = 0, nst;
		uint64_t took = used == 0 ? MiB : used == 1 ? 0 : MiB / 2;
		struct rlt_params np = b;
		if (took)
			assert_int_equal(rlt_decide(&a, &st, t0, took, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(rlt_params_retune(&np, &a, t0, NULL), 1);
		assert_int_equal(rlt_state_carry(&a, &st, &np, &nst, t0, 0), 0);
		uint64_t room = 2 * MiB - 2 * took;
		assert_int_equal(rlt_available(&np, &nst, t0), room);
		if (room)
			assert_int_equal(rlt_decide(&np, &nst, t0, room, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(rlt_decide(&np, &nst, t0, KiB, RLT_MODE_NOW, &at), RLT_DENY);
		assert_int_equal(rlt_decide(&np, &nst, t0, MiB, RLT_MODE_RESERVE, &at), RLT_WAIT);
		assert_int_equal(at, t0 + SEC / 2);
	}
}

/* Issue 17 row 11: 16 MiB under 1 MiB/s dry-run stand 15 s ahead of the clock (no call waited
 * for them). Enforced, the budget starts empty, not 15 s behind: 1 KiB goes within 1 ms. A
 * delay's 15 MiB beyond the burst are waiting calls' and keep their units. */
static void a_dry_run_lag_does_not_carry(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, MiB, 0);
	rlt_ns_t at, t0 = 70 * SEC;

	for (int dry = 1; dry >= 0; dry--) {
		_Atomic uint64_t st = 0, nst;
		struct rlt_params np = a;
		for (int i = 0; i < 16; i++)
			assert_int_not_equal(rlt_decide(&a, &st, t0, MiB, RLT_MODE_RESERVE, &at), RLT_DENY);
		assert_int_equal(rlt_params_retune(&np, &a, t0, NULL), 0);
		assert_int_equal(rlt_state_carry(&a, &st, &np, &nst, t0, dry ? RLT_CARRY_DRY_RUN : 0), 0);
		assert_int_equal(rlt_decide(&np, &nst, t0, KiB, RLT_MODE_RESERVE, &at), RLT_WAIT);
		if (dry)
			assert_true(at <= t0 + MS);
		else
			assert_true(at >= t0 + 15 * SEC);
	}
}

/* A TAT at the end of the ticks is a clamp, not a queue (issue 17 row 7: a rate set absurdly
 * low): carried to a real rate it is an emptied bucket, not 2^62 ticks turned into units. */
static void a_saturated_time_never_carries(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, MiB, 4 * KiB), b = params(RLT_ALGO_TOKEN, 100 * MiB, 0);
	_Atomic uint64_t st = (1ull << 62) - 1, nst;
	rlt_ns_t at, t0 = 90 * SEC;

	assert_int_equal(rlt_params_retune(&b, &a, t0, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0, 0), 0);
	assert_int_equal(rlt_decide(&b, &nst, t0, MiB, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_true(at <= t0 + 10 * MS + 1); /* 1 MiB at 100 MiB/s */
	assert_int_equal(rlt_params_remap(&a, &b, t0, RLT_NS_NEVER - 1, 1), t0);
}

/* A leaky bucket holds only waiting calls: what is ahead keeps its units, and an idle meter
 * stays idle. */
static void leaky_keeps_its_queue_in_units(void **s)
{
	(void)s;
	carried(&(struct carry){.algo = RLT_ALGO_LEAKY, .a_rate = 1000, .a_burst = 1000, .b_rate = 100,
	                        .b_burst = 200, .t0 = 80 * SEC, .first = 100, .second = 10,
	                        .a_wait = 100 * MS, .remapped = SEC, .b_wait = 1100 * MS});
}

/* A window's or log's period cuts its counts: it cannot change (max-wait can). And another
 * algorithm is another rule. */
static void what_cannot_change(void **s)
{
	(void)s;
	struct rlt_params w = params(RLT_ALGO_FIXED_WINDOW, 100, 0), w3 = w;
	struct rlt_params t = params(RLT_ALGO_TOKEN, 100, 0), w2;
	struct rlt_error e;

	for (int a = RLT_ALGO_FIXED_WINDOW; a <= RLT_ALGO_SLIDING_LOG; a++) {
		struct rlt_params o = params((enum rlt_algo)a, 100, 0);
		/* 200 per 2 s: the same rate, another period */
		if (rlt_params_init(&w2, (enum rlt_algo)a, 200, 1, 2 * SEC, 0, RLT_NS_NEVER, &e))
			fail_msg("params: %s", e.msg);
		assert_int_equal(rlt_params_retune(&w2, &o, SEC, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "period"));
	}
	w3.max_wait_ns = 5 * MS;
	assert_int_equal(rlt_params_retune(&w3, &w, SEC, &e), 0);
	assert_int_equal(rlt_params_retune(&t, &w, SEC, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "different algorithm"));
}

/* Fixed window, 100 a second: 80 taken at 10.1 s. Lowered to 50 at 10.2 s, the window is full
 * (80 stay taken) until 11 s, which then admits 50; raised to 200 instead, 120 more go now. */
static void fixed_window_new_limit(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_FIXED_WINDOW, 100, 0);
	rlt_ns_t at, t0 = 10 * SEC + 100 * MS, t1 = t0 + 100 * MS;

	for (int up = 0; up < 2; up++) {
		struct rlt_params b = params(RLT_ALGO_FIXED_WINDOW, up ? 200 : 50, 0);
		_Atomic uint64_t st = 0, nst;
		assert_int_equal(rlt_decide(&a, &st, t0, 80, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(rlt_params_retune(&b, &a, t1, NULL), 1);
		assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t1, 0), 0);
		assert_int_equal(rlt_available(&b, &nst, t1), up ? 120 : 0);
		if (up) {
			assert_int_equal(rlt_decide(&b, &nst, t1, 120, RLT_MODE_NOW, &at), RLT_GO);
			assert_int_equal(rlt_decide(&b, &nst, t1, 1, RLT_MODE_NOW, &at), RLT_DENY);
		} else {
			assert_int_equal(rlt_decide(&b, &nst, t1, 1, RLT_MODE_NOW, &at), RLT_DENY);
			assert_int_equal(rlt_decide(&b, &nst, t1, 50, RLT_MODE_RESERVE, &at), RLT_WAIT);
			assert_int_equal(at, 11 * SEC);
			assert_int_equal(rlt_decide(&b, &nst, t1, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
			assert_int_equal(at, 12 * SEC);
		}
	}
}

/* Reservations already in the next window keep their count there: 100 taken now and 30
 * reserved for 11 s; at 50 a window, 11 s has room for 20 more, then 12 s. */
static void fixed_window_reservations_stay(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_FIXED_WINDOW, 100, 0),
	                  b = params(RLT_ALGO_FIXED_WINDOW, 50, 0);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, t0 = 10 * SEC + 100 * MS;

	assert_int_equal(rlt_decide(&a, &st, t0, 100, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, 30, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, 11 * SEC);
	assert_int_equal(rlt_params_retune(&b, &a, t0 + MS, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0 + MS, 0), 0);
	assert_int_equal(rlt_decide(&b, &nst, t0 + MS, 20, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, 11 * SEC);
	assert_int_equal(rlt_decide(&b, &nst, t0 + MS, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, 12 * SEC);
}

/* Sliding window and log keep their state: the 80 units taken are judged against 50 (nothing
 * goes until they leave the period) or 200 (120 more go at once). The log keeps its ring of 100
 * entries: back up to 100 is fine, 101 is refused with the size named. */
static void sliding_new_limit(void **s)
{
	(void)s;
	rlt_ns_t at, t0 = 10 * SEC + 100 * MS, t1 = t0 + 100 * MS, t2 = t0 + 1100 * MS;
	struct rlt_error e;

	for (int a = RLT_ALGO_SLIDING_WINDOW; a <= RLT_ALGO_SLIDING_LOG; a++) {
		struct rlt_params o = params((enum rlt_algo)a, 100, 0);
		struct rlt_params lo = params((enum rlt_algo)a, 50, 0);
		void *st = test_malloc(rlt_state_size(&o));
		assert_int_equal(rlt_state_init(&o, st, 0), 0);
		assert_int_equal(rlt_decide(&o, st, t0, 80, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(rlt_params_retune(&lo, &o, t1, &e), 0);
		assert_int_equal(rlt_state_size(&lo), rlt_state_size(&o));
		assert_int_equal(rlt_available(&lo, st, t1), 0);
		assert_int_equal(rlt_decide(&lo, st, t1, 1, RLT_MODE_NOW, &at), RLT_DENY);
		/* once the 80 have left the period (the sliding window's: and its sub-window
		 * has no weight left), 50 go and no more */
		assert_int_equal(rlt_decide(&lo, st, t2, 50, RLT_MODE_NOW, &at), RLT_GO);
		assert_int_equal(rlt_decide(&lo, st, t2 + 10 * MS, 1, RLT_MODE_NOW, &at), RLT_DENY);
		/* raised from the lowered one: the 50 taken are judged against 100 */
		struct rlt_params hi = params((enum rlt_algo)a, a == RLT_ALGO_SLIDING_LOG ? 100 : 200, 0);
		assert_int_equal(rlt_params_retune(&hi, &lo, t2 + 20 * MS, &e), 0);
		assert_int_equal(rlt_decide(&hi, st, t2 + 20 * MS,
		                            a == RLT_ALGO_SLIDING_LOG ? 50 : 150, RLT_MODE_NOW, &at),
		                 RLT_GO);
		assert_int_equal(rlt_decide(&hi, st, t2 + 30 * MS, 1, RLT_MODE_NOW, &at), RLT_DENY);
		if (a == RLT_ALGO_SLIDING_LOG) {
			struct rlt_params more = params((enum rlt_algo)a, 101, 0);
			assert_int_equal(rlt_params_retune(&more, &lo, t1, &e), -ERANGE);
			assert_non_null(strstr(e.msg, "at most 100 entries"));
		}
		rlt_state_destroy(&o, st);
		test_free(st);
	}
}

/* A connection-scope fixed window cannot carry every connection's word: refused, saying so. */
static void fixed_window_per_connection_refused(void **s)
{
	(void)s;
	struct rlt_error e;
	unsigned which;
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "100B/s algo=fixed-window scope=connection",
	                                NULL, NULL};
	static struct rlt__ruleset cs;
	if (rlt__ruleset_build(&cs, v, 0, NULL, NULL, &e) != 0)
		fail_msg("build: %s", e.msg);
	assert_int_equal(rlt__rule_set_text(&cs, RLT_VAR_SEND, -1,
	                                    "50B/s algo=fixed-window scope=connection", rlt__now(),
	                                    &which, &e),
	                 -ERANGE);
	assert_non_null(strstr(e.msg, "every connection"));
	assert_int_equal(rlt__rule_set_text(&cs, RLT_VAR_SEND, -1,
	                                    "100B/s algo=fixed-window scope=connection max-wait=1s",
	                                    rlt__now(), &which, &e),
	                 0);
}

static void load(const char *send)
{
	rs_build((const char *[RLT_VAR_COUNT]){NULL, NULL, send, NULL, NULL}, 0);
}

/* A ticket waiting at 1000 B/s (0.5 s away: 500 units beyond the burst) moves to about 5 s
 * away when the rule becomes 100 B/s at once; the rule's block, piece and text follow. */
static void a_waiting_ticket_moves(void **s)
{
	(void)s;
	struct rlt__ticket t, u;
	struct rlt_error e;
	unsigned which;

	load("1000B/s burst=100");
	const struct rlt__rule_ver *v0 = rlt__ver(&rs.rules[RLT_VAR_SEND][0]);
	assert_int_equal(rlt__charge(&rs, &u, RLT_VAR_SEND, 1, NULL, 100, 1), 0);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 500, 1), 0);
	assert_true(t.go >= t.start + 490 * MS && t.go <= t.start + 510 * MS);
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "100B/s burst=100",
	                                    rlt__now(), &which, &e), 0);
	assert_int_equal(which, 0);
	assert_non_null(strstr(e.msg, "in force"));
	assert_ptr_not_equal(rlt__ver(&rs.rules[RLT_VAR_SEND][0]), v0);
	assert_string_equal(rs.rules[RLT_VAR_SEND][0].rule.text, "100B/s burst=100");
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 1), 100); /* 10 ms of 100 B/s is 1 B: the burst */
	assert_int_equal(rlt__ticket_refresh(&rs, &t), 1);
	assert_true(t.go >= t.start + 4900 * MS && t.go <= t.start + 5100 * MS);
	assert_int_equal(rlt__ticket_refresh(&rs, &t), 0);
}

/* Issue 17 row 7: a rate set absurdly low and then raised. A sender at 1 MiB/s burst 4 KiB
 * waits for its next 4 KiB; the rule becomes 1 B per 1000 h (its go time past the clock's
 * span), and a second later 100 MiB/s: the waiter goes within a millisecond of the raise
 * (before: 62 days later, the clamped go time carried into units). */
static void an_absurd_rate_then_a_raise(void **s)
{
	(void)s;
	struct rlt__ticket t, u;
	struct rlt_error e;
	unsigned which;
	rlt_ns_t now = rlt__now();

	load("1MiB/s burst=4KiB");
	assert_int_equal(rlt__charge(&rs, &u, RLT_VAR_SEND, 1, NULL, 4096, 1), 0);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 4096, 1), 0);
	assert_true(t.go > t.start);
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "1B/1000h burst=1B", now, &which,
	                                    &e), 0);
	assert_int_equal(rlt__ticket_refresh(&rs, &t), 1);
	assert_true(t.go > now + 1000ull * 3600 * SEC);
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "100MiB/s", now + SEC, &which,
	                                    &e), 0);
	assert_int_equal(rlt__ticket_refresh(&rs, &t), 1);
	assert_true(t.go <= now + SEC + MS);
}

/* Issue 17 row 11 through the ruleset: a dry-run rule 20 s behind, enforced by a set of the
 * same rate, makes the next call wait no more than its own cost at the rate. */
static void enforcing_a_dry_run_starts_fresh(void **s)
{
	(void)s;
	struct rlt__ticket t;
	struct rlt_error e;
	unsigned which;

	load("1000B/s action=dry-run");
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 21000, 1), 0);
	assert_int_equal(t.go, t.start); /* a dry-run never holds a call */
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "1000B/s action=delay",
	                                    rlt__now(), &which, &e), 0);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 1, NULL, 1, 1), 0);
	assert_true(t.go <= t.start + 2 * MS);
}

/* Refusals change nothing: the block in force stays. */
static void refusals_change_nothing(void **s)
{
	(void)s;
	struct rlt_error e;
	unsigned which;
	static const char *const bad[] = {
		"1000/s",                     /* malformed: the parser's line */
		"1MiB/s algo=leaky",          /* another algorithm */
		"1MiB/s scope=connection",    /* another scope */
		"1MiB/s peer=10.0.0.0/8",     /* other filters */
		"1MiB/s; 2MiB/s",             /* two rules */
	};
	load("1000B/s burst=100");
	const struct rlt__rule_ver *v0 = rlt__ver(&rs.rules[RLT_VAR_SEND][0]);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_true(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, bad[i], rlt__now(), &which,
		                               &e) < 0);
		assert_null(strchr(e.msg, '\n'));
		assert_ptr_equal(rlt__ver(&rs.rules[RLT_VAR_SEND][0]), v0);
	}
	assert_true(rlt__rule_set_text(&rs, RLT_VAR_SEND, 1, "1MiB/s", rlt__now(), &which, &e) < 0);
	assert_true(rlt__rule_set_text(&rs, RLT_VAR_RECV, -1, "1MiB/s", rlt__now(), &which, &e) < 0);
	assert_string_equal(rs.rules[RLT_VAR_SEND][0].rule.text, "1000B/s burst=100");
}

/* Several rules: the one whose filters the new rule names, or #N. */
static void which_rule(void **s)
{
	(void)s;
	struct rlt_error e;
	unsigned which;

	load("1000B/s port=80; 2000B/s port=443");
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "5000B/s port=443", rlt__now(),
	                                    &which, &e), 0);
	assert_int_equal(which, 1);
	assert_true(rlt__rule_set_text(&rs, RLT_VAR_SEND, -1, "5000B/s", rlt__now(), &which, &e) < 0);
	assert_non_null(strstr(e.msg, "#N"));
	/* #1 with rule 1's filters is rule 1; with rule 2's, a different rule */
	assert_int_equal(rlt__rule_set_text(&rs, RLT_VAR_SEND, 0, "3000B/s port=80", rlt__now(),
	                                    &which, &e), 0);
	assert_true(rlt__rule_set_text(&rs, RLT_VAR_SEND, 0, "3000B/s port=443", rlt__now(), &which,
	                               &e) < 0);
}

/* A request is looked for at the page's tick, not at every call: a call in the same tick as
 * the request still runs the old rule, the first call a tick later (RLT_PUB_CHECK_NS, 5 ms:
 * within the 10 ms rlthrottle(1) COMMANDS gives) applies it and answers. */
static void a_request_applies_at_the_tick(void **s)
{
	(void)s;
	struct rlt__ticket t;
	struct rlt_error e;

	load("1000B/s burst=100");
	if (rlt__pub_create(&rs, getpid(), &e) != 0)
		fail_msg("page: %s", e.msg);
	const struct rlt__rule_ver *v0 = rlt__ver(&rs.rules[RLT_VAR_SEND][0]);
	rlt_ns_t now = rlt__now();
	assert_int_equal(rlt__ctl_request(rlt__pub_ctl(rs.pub), RLT_VAR_SEND, -1,
	                                  "100B/s burst=100", 0, &e),
	                 1);
	assert_int_equal(rlt__charge_wait_at(&rs, &t, RLT_VAR_SEND, 1, NULL, NULL, 1, 0, now), 0);
	rlt__settle(&rs, &t, 1, 0);
	assert_ptr_equal(rlt__ver(&rs.rules[RLT_VAR_SEND][0]), v0);
	now += RLT_PUB_CHECK_NS;
	assert_int_equal(rlt__charge_wait_at(&rs, &t, RLT_VAR_SEND, 1, NULL, NULL, 1, 0, now), 0);
	rlt__settle(&rs, &t, 1, 0);
	assert_ptr_not_equal(rlt__ver(&rs.rules[RLT_VAR_SEND][0]), v0);
	assert_string_equal(rs.rules[RLT_VAR_SEND][0].rule.text, "100B/s burst=100");
	rlt__pub_destroy(&rs);
}

/* A segment's rule in force is checked before `set shared:` computes with it: root's set reaches
 * other users' segments, and a slot past the ring or a reciprocal that is not its fraction's
 * made it read out of bounds or loop. Refused, and a sound segment is set again after. */
static void a_damaged_segment_is_refused(void **s)
{
	(void)s;
	char name[64], rule[128], obj[96];
	struct rlt_error e;

	snprintf(name, sizeof name, "rlt-unit-set-%d", (int)getpid());
	snprintf(rule, sizeof rule, "1000B/s scope=shared:%s", name);
	snprintf(obj, sizeof obj, "/" RLT_SHM_PREFIX "%s", name);
	shm_unlink(obj);
	load(rule);
	snprintf(rule, sizeof rule, "500B/s scope=shared:%s", name);
	assert_int_equal(rlt__shm_set(name, rule, rlt__now(), &e), 0);
	int fd = shm_open(obj, O_RDWR, 0);
	assert_true(fd >= 0);
	struct rlt__shm_hdr *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	uint32_t slot = h->set_slot;
	h->set_slot = 1u << 30;
	assert_int_equal(rlt__shm_set(name, rule, rlt__now(), &e), -EINVAL);
	assert_non_null(strstr(e.msg, "refused"));
	h->set_slot = slot;
	uint64_t recip = h->set_params.tick_recip;
	h->set_params.tick_recip = 1;
	assert_int_equal(rlt__shm_set(name, rule, rlt__now(), &e), -EINVAL);
	h->set_params.tick_recip = recip;
	h->set_params.unit_shift = 200;
	assert_int_equal(rlt__shm_set(name, rule, rlt__now(), &e), -EINVAL);
	h->set_params.unit_shift = 0;
	h->set_params.unit_round = 0;
	assert_int_equal(rlt__shm_set(name, rule, rlt__now(), &e), 0);
	munmap(h, sizeof *h);
	close(fd);
	shm_unlink(obj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lower_keeps_the_queue),
		cmocka_unit_test(raise_carries_the_state),
		cmocka_unit_test(a_credit_stays_within_the_new_burst),
		cmocka_unit_test(lowering_keeps_a_share_of_the_burst),
		cmocka_unit_test(raising_never_passes_more_than_the_new_burst),
		cmocka_unit_test(a_dry_run_lag_does_not_carry),
		cmocka_unit_test(leaky_keeps_its_queue_in_units),
		cmocka_unit_test(a_saturated_time_never_carries),
		cmocka_unit_test(an_absurd_rate_then_a_raise),
		cmocka_unit_test(enforcing_a_dry_run_starts_fresh),
		cmocka_unit_test(what_cannot_change),
		cmocka_unit_test(fixed_window_new_limit),
		cmocka_unit_test(fixed_window_reservations_stay),
		cmocka_unit_test(sliding_new_limit),
		cmocka_unit_test(fixed_window_per_connection_refused),
		cmocka_unit_test(a_waiting_ticket_moves),
		cmocka_unit_test(refusals_change_nothing),
		cmocka_unit_test(which_rule),
		cmocka_unit_test(a_request_applies_at_the_tick),
		cmocka_unit_test(a_damaged_segment_is_refused),
	};
	return cmocka_run_group_tests_name("rule_set", tests, NULL, NULL);
}
