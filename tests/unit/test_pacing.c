/* test_pacing.c: the pacing decisions both fronts make (src/pacing.c), driven with a fake clock:
 * the engines' states are moved with rlt_decide at chosen times and the decisions are asked at
 * chosen times, so nothing here depends on the machine's speed. */
#include <string.h>

#include "testutil.h"
#include "charge.h"
#include "pacing.h"
#include "policy.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

#define MS (1000 * 1000ull)
#define T0 (1000 * RLT_NS_PER_SEC) /* the fake clock's start: far from 0 */

static void load(enum rlt_var var, const char *value)
{
	const char *v[RLT_VAR_COUNT] = {NULL};

	v[var] = value;
	rs_build(v, 0);
}

/* 100 KiB/s: a piece is 10 ms of the rate, 1024 bytes; the burst 8 KiB goes whole. */
static void a_send_within_the_burst_goes_whole(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 1), 1024);

	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 8192, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(p.mode, RLT_PACE_WHOLE);
	assert_false(rlt__pace_charge_after(&p));
	/* whole, whatever the budget says now: it waits for all of it */
	rs_take(RLT_VAR_SEND, 0, T0, 8192);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 8192);
	assert_int_equal(rlt__pace_after(&p, 8192, 8192, 0), 0);
	assert_int_equal(p.done, 8192);

	/* one byte more than the burst: pieces */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 8193, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 1024);
	/* sendfile and splice (no keep-whole) move in pieces however small */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 4096, 0);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 1024);
	/* non-blocking: what goes whole is one piece */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 1024, RLT_PACE_KEEP_WHOLE | RLT_PACE_NONBLOCK);
	assert_int_equal(p.mode, RLT_PACE_WHOLE);
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 1025, RLT_PACE_KEEP_WHOLE | RLT_PACE_NONBLOCK);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
}

/* A call the throttle must not reshape (MSG_ZEROCOPY: one completion per real call) goes in one
 * real call whatever its size, blocking or not (issue 17 row 6). */
static void an_unsplit_call_goes_whole(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	for (int nb = 0; nb < 2; nb++) {
		rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 512 * 1024,
		                RLT_PACE_KEEP_WHOLE | RLT_PACE_UNSPLIT | (nb ? RLT_PACE_NONBLOCK : 0));
		assert_int_equal(p.mode, RLT_PACE_WHOLE);
		assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 512 * 1024);
		assert_int_equal(rlt__pace_after(&p, 512 * 1024, 100000, 0), 0); /* short: ends */
	}
}

/* A delay rule with a max-wait: whole is what the rate gives within it, when that is less. */
static void keep_whole_is_bounded_by_max_wait(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_SEND, "100KiB/s burst=64KiB max-wait=50ms");
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 5120, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(p.mode, RLT_PACE_WHOLE);
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 5121, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
}

/* A non-blocking send sends what the budget allows now when that is more than a piece. */
static void a_nonblocking_send_takes_what_is_there(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 100000, RLT_PACE_KEEP_WHOLE | RLT_PACE_NONBLOCK);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 8192); /* the whole burst */
	rs_take(RLT_VAR_SEND, 0, T0, 8192);
	/* nothing left: one piece, waited for (by a socket whose readiness is not held: with
	 * it, the call fails with EAGAIN first: a_nonblocking_call_never_waits) */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 1024);
	/* 30 ms later: 3 KiB */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 30 * MS), 3072);
	/* never more than is left to send */
	p.done = 100000 - 2000;
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 30 * MS), 2000);
}

/* A non-blocking call the budget does not allow now fails with EAGAIN, nothing charged, at
 * the same time as the waits hold its socket back (rlt__ready_at); one it allows goes. A
 * blocking call, one whose readiness the waits cannot hold (RLT_PACE_UNHELD) and a reject
 * rule (its charge refuses, with its errno) are not refused here. */
static void a_nonblocking_call_never_waits(void **st)
{
	const unsigned nb = RLT_PACE_NONBLOCK;
	(void)st;
	/* a send needs a piece (1024 bytes at 100 KiB/s) */
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, nb, T0));
	rs_take(RLT_VAR_SEND, 0, T0, 8192);
	assert_true(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, nb, T0));
	assert_true(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, nb, T0 + 9 * MS));
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, nb, T0 + 10 * MS));
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, 0, T0));
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_SEND, 1, NULL, NULL, nb | RLT_PACE_UNHELD, T0));
	/* nothing was charged by asking: the budget is as before */
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 1, NULL, T0 + 10 * MS), 1024);

	/* a receive needs half a piece: 512 bytes, 5 ms of the rate */
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	assert_true(rlt__pace_refuses(&rs, RLT_VAR_RECV, 1, NULL, NULL, nb, T0 + 4 * MS));
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_RECV, 1, NULL, NULL, nb, T0 + 5 * MS));
	/* what it then takes: the half piece there is, at once */
	struct rlt__pace p;
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, nb);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 5 * MS), 512);

	/* a reject rule never makes a call wait: its charge says no, with its errno */
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB action=reject");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	assert_false(rlt__pace_refuses(&rs, RLT_VAR_RECV, 1, NULL, NULL, nb, T0));
}

/* A receive asks for what the budget allows now: from half a piece up (a delay rule), or any
 * (a reject rule); below half a piece a delay rule waits for a whole one. */
static void the_half_piece_receive_rule(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB max-wait=10s");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	assert_int_equal(p.mode, RLT_PACE_PIECES); /* a max-wait: charged before */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 1024);
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	/* 6 ms later: 614 bytes (>= half a piece): asks for them */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 6 * MS), 614);
	/* 4 ms later: 409 bytes (< half): waits for a whole piece */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 4 * MS), 1024);
	/* nothing at all: a whole piece */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 1024);

	load(RLT_VAR_RECV, "100KiB/s burst=8KiB action=reject");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	/* a reject rule takes what there is, however little */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 4 * MS), 409);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 1 * MS), 102);

	/* non-blocking: what the budget allows now, when more than a piece (an edge-triggered
	 * reader must not be handed one piece of the kernel's data with budget left) */
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, RLT_PACE_NONBLOCK);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 8192);
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 4096, RLT_PACE_NONBLOCK);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 4096);
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	/* below a piece, as before: half a piece or more is taken, less waits for a piece */
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 6 * MS), 614);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0 + 4 * MS), 1024);
}

/* A blocking receive under token buckets that delay without a max-wait is charged after it
 * moved: it waits for data holding no reservation. Non-blocking, or any other rule: before. */
static void receive_then_charge_when_every_rule_admits(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_RECV, "1MiB/s burst=64KiB");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	assert_int_equal(p.mode, RLT_PACE_AFTER);
	assert_true(rlt__pace_charge_after(&p));
	/* the piece does not look at the budget (it is charged whatever came) */
	rs_take(RLT_VAR_RECV, 0, T0, 65536);
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, T0), 10485);
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, RLT_PACE_NONBLOCK);
	assert_int_equal(p.mode, RLT_PACE_PIECES);

	load(RLT_VAR_RECV, "1MiB/s burst=64KiB max-wait=1s");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
	load(RLT_VAR_RECV, "1MiB/s algo=sliding-window");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
	load(RLT_VAR_RECV, "1MiB/s action=reject");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 65536, 0);
	assert_int_equal(p.mode, RLT_PACE_PIECES);
	/* keep-whole is for sends only */
	load(RLT_VAR_RECV, "1MiB/s burst=64KiB");
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 100, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(p.mode, RLT_PACE_AFTER);
}

/* After a piece: whether the call goes on. */
static void whether_the_call_goes_on(void **st)
{
	struct rlt__pace p;
	(void)st;
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB");
	/* a receive returns after one piece that moved data, unless MSG_WAITALL */
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 4096, 0);
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 0), 0);
	assert_int_equal(p.done, 1024);
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 4096, RLT_PACE_WAITALL);
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 0), 1);
	/* a short piece made as the program asked: the kernel had no more (a signal) */
	assert_int_equal(rlt__pace_after(&p, 1024, 100, 0), 0);
	assert_int_equal(p.done, 1124);
	/* the end of the stream, a signal after data, all of it */
	rlt__pace_begin(&p, &rs, RLT_VAR_RECV, 1, 4096, RLT_PACE_WAITALL);
	assert_int_equal(rlt__pace_after(&p, 1024, 0, 0), 0);
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 1), 0);
	p.done = 0;
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 0), 1);
	assert_int_equal(rlt__pace_after(&p, 3072, 3072, 0), 0);
	assert_int_equal(p.done, 4096);

	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	/* a blocking send goes on until all has gone */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 100000, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 0), 1);
	assert_int_equal(rlt__pace_after(&p, 1024, 1000, 0), 0); /* short: a signal */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 100000, RLT_PACE_KEEP_WHOLE);
	assert_int_equal(rlt__pace_after(&p, 1024, 1024, 1), 0); /* a signal, data moved */
	/* a non-blocking send returns after one piece */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 100000, RLT_PACE_NONBLOCK);
	assert_int_equal(rlt__pace_after(&p, 8192, 8192, 0), 0);
}

/* A blocking send made in pieces: every piece but the last is a whole piece, they add up to
 * the total, and each conforms to the rate when taken at the time the budget allows. */
static void pieces_add_up_at_the_rate(void **st)
{
	struct rlt__pace p;
	struct rlt__rt_rule *r;
	rlt_ns_t now = T0, at;
	unsigned calls = 0;
	(void)st;
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	r = &rs.rules[RLT_VAR_SEND][0];
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 1, 50000, RLT_PACE_KEEP_WHOLE);
	for (int more = 1; more && calls < 1000; calls++) {
		uint64_t piece = rlt__pace_piece(&p, &rs, NULL, now);
		assert_true(piece > 0 && piece <= 1024);
		if (rlt_decide(&r->rule.params, r->v0.state, now, piece, RLT_MODE_RESERVE, &at) == RLT_WAIT)
			now = at;
		more = rlt__pace_after(&p, piece, piece, 0);
	}
	assert_int_equal(p.done, 50000);
	assert_int_equal(calls, 49); /* 48 pieces of 1024 and one of 848 */
	/* 50000 - 8192 (the burst) at 102400 B/s: 408 ms after the start */
	assert_true(now - T0 >= 400 * MS && now - T0 <= 410 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_send_within_the_burst_goes_whole),
		cmocka_unit_test(an_unsplit_call_goes_whole),
		cmocka_unit_test(keep_whole_is_bounded_by_max_wait),
		cmocka_unit_test(a_nonblocking_send_takes_what_is_there),
		cmocka_unit_test(a_nonblocking_call_never_waits),
		cmocka_unit_test(the_half_piece_receive_rule),
		cmocka_unit_test(receive_then_charge_when_every_rule_admits),
		cmocka_unit_test(whether_the_call_goes_on),
		cmocka_unit_test(pieces_add_up_at_the_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
