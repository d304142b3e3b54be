/* test_rule_set.c: `rlthrottle set` in the core. The engines' side with a fake clock (they take
 * `now`): params retuned to continue a state (the backlog drains at the new rate, a reservation
 * keeps its place, a credit stays a credit up to the new burst), a state carried when the new
 * rate outruns the tick, what cannot change. Then a ruleset's side: the rule swapped, a waiting
 * ticket moved, the refusals (nothing changed). */
#include <errno.h>
#include <string.h>

#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "rule_set.h"

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
 * the 400 units still ahead take 4 s, so the reservation moves to 4.1 s and a newcomer queues
 * behind it at the new rate. */
static void lower_keeps_the_queue(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, 1000, 100), b = params(RLT_ALGO_TOKEN, 100, 100);
	_Atomic uint64_t st = 0;
	rlt_ns_t at, t0 = 10 * SEC;

	assert_int_equal(rlt_decide(&a, &st, t0, 100, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, 500, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 500 * MS);
	assert_int_equal(rlt_params_retune(&b, &a, t0 + 100 * MS, NULL), 0);
	assert_int_equal(b.ticks_per_unit, a.ticks_per_unit);
	assert_int_equal(rlt_params_remap(&a, &b, t0 + 100 * MS, at), t0 + 4100 * MS);
	assert_int_equal(rlt_decide(&b, &st, t0 + 100 * MS, 10, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 4200 * MS);
	/* and raised again (within the first tick's reach): the queue drains at 1000/s once more */
	struct rlt_params c = params(RLT_ALGO_TOKEN, 1000, 100);
	assert_int_equal(rlt_params_retune(&c, &b, t0 + 1100 * MS, NULL), 0);
	/* at 1.1 s under b, 100 of the 510 units ahead of 0.1 s have drained: 410 - 100 = 310 ahead
	 * of the end of the burst, 0.31 s at 1000/s */
	assert_int_equal(rlt_params_remap(&b, &c, t0 + 1100 * MS, at), t0 + 1410 * MS);
}

/* A rate far above the first (10/s -> 100000/s) gets ticks of its own and a carried state: the
 * 50 units ahead at the set are still ahead, now 0.5 ms worth. */
static void raise_carries_the_state(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, 10, 1), b = params(RLT_ALGO_TOKEN, 100000, 1);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, t0 = 20 * SEC;

	assert_int_equal(rlt_decide(&a, &st, t0, 1, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(rlt_decide(&a, &st, t0, 50, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 5 * SEC);
	assert_int_equal(rlt_params_retune(&b, &a, t0, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0), 0);
	assert_int_equal(rlt_params_remap(&a, &b, t0, at), t0 + 500000);
	assert_int_equal(rlt_decide(&b, &nst, t0, 1, RLT_MODE_RESERVE, &at), RLT_WAIT);
	assert_int_equal(at, t0 + 510000);
}

/* An idle bucket is full: carried into a smaller burst it is full at that burst, no more. */
static void a_credit_stays_within_the_new_burst(void **s)
{
	(void)s;
	struct rlt_params a = params(RLT_ALGO_TOKEN, 10, 1000), b = params(RLT_ALGO_TOKEN, 1000000, 5);
	_Atomic uint64_t st = 0, nst;
	rlt_ns_t at, t0 = 1000 * SEC;

	assert_int_equal(rlt_params_retune(&b, &a, t0, NULL), 1);
	assert_int_equal(rlt_state_carry(&a, &st, &b, &nst, t0), 0);
	assert_int_equal(rlt_decide(&b, &nst, t0, 5, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt_decide(&b, &nst, t0, 1, RLT_MODE_NOW, &at), RLT_DENY);
}

/* A window's counters are laid out for its limit and period: only max-wait may change. And
 * another algorithm is another rule. */
static void what_cannot_change(void **s)
{
	(void)s;
	struct rlt_params w = params(RLT_ALGO_FIXED_WINDOW, 100, 0), w2 = params(RLT_ALGO_FIXED_WINDOW, 50, 0);
	struct rlt_params w3 = w, t = params(RLT_ALGO_TOKEN, 100, 0);
	struct rlt_error e;

	assert_int_equal(rlt_params_retune(&w2, &w, SEC, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "restart"));
	w3.max_wait_ns = 5 * MS;
	assert_int_equal(rlt_params_retune(&w3, &w, SEC, &e), 0);
	assert_int_equal(rlt_params_retune(&t, &w, SEC, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "different algorithm"));
}

static struct rlt__ruleset rs;

static void load(const char *send)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, send, NULL, NULL};
	struct rlt_error err;
	memset(&rs, 0, sizeof rs);
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lower_keeps_the_queue),
		cmocka_unit_test(raise_carries_the_state),
		cmocka_unit_test(a_credit_stays_within_the_new_burst),
		cmocka_unit_test(what_cannot_change),
		cmocka_unit_test(a_waiting_ticket_moves),
		cmocka_unit_test(refusals_change_nothing),
		cmocka_unit_test(which_rule),
	};
	return cmocka_run_group_tests_name("rule_set", tests, NULL, NULL);
}
