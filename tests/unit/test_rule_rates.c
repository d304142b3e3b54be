/* test_rule_rates.c: src/rule_parse.c: a rule's rate (rlthrottle(7) RULES): each variable's
 * defaults, the units of an amount, the periods, and RLT_CONNS' count of connections. */
#include <errno.h>
#include <string.h>

#include "rule_harness.h"

/* ---------------------------------------------------------------------------------------------
 * Variables, units, periods
 * ------------------------------------------------------------------------------------------- */

static void test_defaults_per_variable(void **state)
{
	static const struct {
		enum rlt_var v;
		const char *in;
		enum rlt_unit unit;
		enum rlt_action action;
		int err;
	} cases[] = {
		{ CONNECT, "10/s", RLT_UNIT_CALLS, RLT_ACTION_DELAY, ECONNREFUSED },
		{ ACCEPT, "10/s", RLT_UNIT_CALLS, RLT_ACTION_DELAY, ECONNABORTED },
		{ SEND, "10B/s", RLT_UNIT_BYTES, RLT_ACTION_DELAY, ENOBUFS },
		{ RECV, "10msg/s", RLT_UNIT_MSGS, RLT_ACTION_DELAY, EAGAIN },
		{ CONNS, "10", RLT_UNIT_CONNS, RLT_ACTION_REJECT, ECONNREFUSED },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt_rule r = parse_rt(cases[i].v, cases[i].in);
		assert_int_equal(r.var, cases[i].v);
		assert_int_equal(r.unit, cases[i].unit);
		assert_true(r.amount_num == 10 && r.amount_den == 1);
		assert_true(r.period_ns == (cases[i].v == CONNS ? 0 : NS_S));
		assert_int_equal(r.algo, RLT_ALGO_TOKEN);
		assert_true(r.burst == 0);
		assert_int_equal(r.action, cases[i].action);
		assert_true(r.max_wait_ns == RLT_NS_NEVER);
		assert_int_equal(r.err, cases[i].err);
		assert_int_equal(r.scope, RLT_SCOPE_PROCESS);
		assert_int_equal(r.fallback, RLT_FALLBACK_LOCAL);
		assert_int_equal(r.peer_af, 0);
		assert_int_equal(r.port_lo, 0);
		assert_int_equal(r.port_hi, 65535);
		assert_int_equal(r.family, RLT_FAMILY_INET);
		assert_string_equal(r.text, cases[i].in);
		if (cases[i].v != CONNS)
			assert_true(r.params.burst == 10); /* one second of the rate */
	}
}

static void test_units(void **state)
{
	static const struct {
		const char *in;
		enum rlt_unit unit;
		uint64_t num, den;
	} cases[] = {
		{ "1B/s", RLT_UNIT_BYTES, 1, 1 },
		{ "1kB/s", RLT_UNIT_BYTES, 1000, 1 },
		{ "1MB/s", RLT_UNIT_BYTES, 1000000, 1 },
		{ "1GB/s", RLT_UNIT_BYTES, 1000000000, 1 },
		{ "1KiB/s", RLT_UNIT_BYTES, 1024, 1 },
		{ "1MiB/s", RLT_UNIT_BYTES, 1048576, 1 },
		{ "1GiB/s", RLT_UNIT_BYTES, 1073741824, 1 },
		{ "1kbit/s", RLT_UNIT_BYTES, 125, 1 },
		{ "8Mbit/s", RLT_UNIT_BYTES, 1000000, 1 },
		{ "1Gbit/s", RLT_UNIT_BYTES, 125000000, 1 },
		/* far above any link: "count, don't limit" (issue 9) */
		{ "100GiB/s", RLT_UNIT_BYTES, 107374182400ull, 1 },
		{ "1TB/s", RLT_UNIT_BYTES, 1000000000000ull, 1 },
		{ "1TiB/s", RLT_UNIT_BYTES, 1099511627776ull, 1 },
		{ "8Tbit/s", RLT_UNIT_BYTES, 1000000000000ull, 1 },
		{ "1000000TB/s", RLT_UNIT_BYTES, 1000000000000000000ull, 1 },
		{ "1.5kbit/s", RLT_UNIT_BYTES, 375, 2 },
		{ "0.5MB/s", RLT_UNIT_BYTES, 500000, 1 },
		{ "300msg/s", RLT_UNIT_MSGS, 300, 1 },
		{ "2.5msg/s", RLT_UNIT_MSGS, 5, 2 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (enum rlt_var v = SEND; v <= RECV; v++) {
			struct rlt_rule r = parse_rt(v, cases[i].in);
			assert_int_equal(r.unit, cases[i].unit);
			assert_true(r.amount_num == cases[i].num);
			assert_true(r.amount_den == cases[i].den);
		}
	}
	/* calls: no unit, fractions allowed */
	struct rlt_rule r = parse_rt(CONNECT, "0.5/s");
	assert_true(r.amount_num == 1 && r.amount_den == 2);
	r = parse1(ACCEPT, "007/s");
	assert_true(r.amount_num == 7);
}

static void test_periods(void **state)
{
	static const struct {
		const char *in;
		uint64_t ns;
		const char *canon_rate;
	} cases[] = {
		{ "5/ms", 1000000ull, "5/ms " },
		{ "5/100ms", 100000000ull, "5/100ms " },
		{ "5/1000ms", NS_S, "5/s " },
		{ "5/s", NS_S, "5/s " },
		{ "5/1s", NS_S, "5/s " },
		{ "5/10s", 10 * NS_S, "5/10s " },
		{ "120/min", 60 * NS_S, "120/min " },
		{ "120/60s", 60 * NS_S, "120/min " },
		{ "5/2min", 120 * NS_S, "5/2min " },
		{ "5/h", 3600 * NS_S, "5/h " },
		{ "5/24h", 86400 * NS_S, "5/24h " },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt_rule r = parse_rt(CONNECT, cases[i].in);
		char buf[512];
		assert_true(r.period_ns == cases[i].ns);
		format(&r, buf, sizeof buf);
		assert_memory_equal(buf, cases[i].canon_rate, strlen(cases[i].canon_rate));
	}
}

static void test_conns(void **state)
{
	struct rlt_rule r;
	char buf[512];
	(void)state;
	r = parse1(CONNS, "50");
	assert_int_equal(r.unit, RLT_UNIT_CONNS);
	assert_true(r.amount_num == 50 && r.amount_den == 1 && r.period_ns == 0);
	format(&r, buf, sizeof buf);
	assert_string_equal(buf, "50 action=reject errno=ECONNREFUSED scope=process family=inet");
	r = parse_rt(CONNS, " 5 action=delay max-wait=2s errno=EMFILE scope=shared:web peer=10.0.0.0/8 "
	                   "port=443 family=all ");
	assert_int_equal(r.action, RLT_ACTION_DELAY);
	assert_true(r.max_wait_ns == 2 * NS_S);
	assert_int_equal(r.err, EMFILE);
	assert_int_equal(r.scope, RLT_SCOPE_SHARED);
	assert_string_equal(r.scope_name, "web");
	assert_int_equal(r.family, RLT_FAMILY_ALL);
	r = parse_rt(CONNS, "1 scope=redis://cache:6379/pool fallback=allow");
	assert_int_equal(r.scope, RLT_SCOPE_REDIS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_per_variable),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_periods),
		cmocka_unit_test(test_conns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
