/* test_ready.c: when a throttled socket's direction may proceed (src/ready.c), with a fake
 * clock: the budgets are moved with rlt_decide at chosen times, so nothing here depends on the
 * machine's speed. */
#include <string.h>

#include "testutil.h"
#include "ready.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

#define MS (1000 * 1000ull)
#define T0 (1000 * RLT_NS_PER_SEC)

static void load(enum rlt_var var, const char *value)
{
	const char *v[RLT_VAR_COUNT] = {NULL};

	v[var] = value;
	rs_build(v, 0);
}

/* 100 KiB/s, burst 8 KiB: a piece is 1024 bytes (10 ms of the rate). */
static void a_full_bucket_is_ready_now(void **st)
{
	(void)st;
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB");
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, T0), T0);
	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_SEND, 1, NULL, NULL, T0), T0);
}

/* An empty bucket: a receive is due when half a piece has come (5 ms), a send when a whole
 * one has (10 ms); never before. A debt (reserved ahead) adds its time. */
static void an_empty_bucket_is_due_when_its_piece_has_come(void **st)
{
	rlt_ns_t at;
	(void)st;
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	at = rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, T0);
	assert_in_range(at, T0 + 5 * MS - 10000, T0 + 5 * MS + 10000);
	/* asked again then: ready */
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, at + 10000), at + 10000);

	load(RLT_VAR_SEND, "100KiB/s burst=8KiB");
	rs_take(RLT_VAR_SEND, 0, T0, 8192 + 10240); /* the burst and 100 ms ahead */
	at = rlt__ready_at(&rs, RLT_VAR_SEND, 1, NULL, NULL, T0);
	assert_in_range(at, T0 + 110 * MS - 10000, T0 + 110 * MS + 10000);
	assert_true(rlt__ready_at(&rs, RLT_VAR_SEND, 1, NULL, NULL, T0 + 100 * MS) > T0 + 100 * MS);
}

/* A rule outside the mask, or one that rejects or only watches, never holds a socket back;
 * of two that hold, the later decides. */
static void only_delay_rules_in_the_mask_hold(void **st)
{
	rlt_ns_t at;
	(void)st;
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB action=reject");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, T0), T0);
	load(RLT_VAR_RECV, "100KiB/s burst=8KiB action=dry-run");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, T0), T0);

	load(RLT_VAR_RECV, "100KiB/s burst=8KiB; 10KiB/s burst=8KiB");
	rs_take(RLT_VAR_RECV, 0, T0, 8192);
	rs_take(RLT_VAR_RECV, 1, T0, 8192);
	assert_int_equal(rlt__ready_at(&rs, RLT_VAR_RECV, 0, NULL, NULL, T0), T0);
	at = rlt__ready_at(&rs, RLT_VAR_RECV, 3, NULL, NULL, T0);
	/* the slower rule: its piece (256 B, the floor) half come at 10 KiB/s: 12.5 ms */
	assert_in_range(at, T0 + 12 * MS, T0 + 13 * MS);
	assert_true(at > rlt__ready_at(&rs, RLT_VAR_RECV, 1, NULL, NULL, T0));
}

/* A fixed window's units come back at its boundary. */
static void a_window_is_due_at_its_boundary(void **st)
{
	rlt_ns_t at;
	(void)st;
	load(RLT_VAR_SEND, "10KiB/1s algo=fixed-window");
	rs_take(RLT_VAR_SEND, 0, T0 + 300 * MS, 10240);
	at = rlt__ready_at(&rs, RLT_VAR_SEND, 1, NULL, NULL, T0 + 300 * MS);
	assert_int_equal(at, T0 + RLT_NS_PER_SEC);
}

/* The later of two "not before" times (the budgets', the network conditions'). */
static void later_of_two(void **st)
{
	(void)st;
	assert_int_equal(rlt__ready_later(5, 7), 7);
	assert_int_equal(rlt__ready_later(9, 7), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_full_bucket_is_ready_now),
		cmocka_unit_test(an_empty_bucket_is_due_when_its_piece_has_come),
		cmocka_unit_test(only_delay_rules_in_the_mask_hold),
		cmocka_unit_test(a_window_is_due_at_its_boundary),
		cmocka_unit_test(later_of_two),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
