/* test_rule_format.c: src/rule_text.c's canonical form (rlt_rule_format): the examples of
 * rlthrottle(7), its snprintf-like contract, and the round trip over thousands of random rules. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rule_harness.h"

/* ---------------------------------------------------------------------------------------------
 * The canonical form
 * ------------------------------------------------------------------------------------------- */

static void test_canonical_examples(void **state)
{
	static const struct {
		enum rlt_var v;
		const char *in, *out;
	} cases[] = {
		{ SEND, "1MiB/s",
		  "1048576B/s algo=token burst=1048576B action=delay errno=ENOBUFS scope=process "
		  "family=inet" },
		{ RECV, "8Mbit/s algo=leaky",
		  "1000000B/s algo=leaky burst=1000000B action=delay errno=EAGAIN scope=process "
		  "family=inet" },
		{ SEND, "300msg/s burst=10",
		  "300msg/s algo=token burst=10msg action=delay errno=ENOBUFS scope=process "
		  "family=inet" },
		{ CONNECT, "120/min algo=fixed-window",
		  "120/min algo=fixed-window action=delay errno=ECONNREFUSED scope=process "
		  "family=inet" },
		{ ACCEPT, "5/100ms action=reject errno=EMFILE scope=connection",
		  "5/100ms algo=token burst=50 action=reject errno=EMFILE scope=connection "
		  "family=inet" },
		{ CONNECT, "0.5/s max-wait=1.5s peer=10.1.2.3/16 port=80-81 family=all",
		  "0.5/s algo=token burst=1 action=delay max-wait=1500ms errno=ECONNREFUSED "
		  "scope=process peer=10.1.0.0/16 port=80-81 family=all" },
		{ SEND, "1.5kbit/2h scope=redis://[::1]:6379/foo fallback=deny",
		  "187.5B/2h algo=token burst=1B action=delay errno=ENOBUFS "
		  "scope=redis://[::1]:6379/foo fallback=deny family=inet" },
		{ CONNS, "50", "50 action=reject errno=ECONNREFUSED scope=process family=inet" },
	};
	char buf[1024];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt_rule r = parse_rt(cases[i].v, cases[i].in);
		format(&r, buf, sizeof buf);
		assert_string_equal(buf, cases[i].out);
		/* the canonical form is a fixed point */
		struct rlt_rule back = parse1(cases[i].v, buf);
		char again[1024];
		format(&back, again, sizeof again);
		assert_string_equal(again, buf);
	}
}

static void test_format_snprintf_like(void **state)
{
	struct rlt_rule r = parse1(CONNECT, "10/s");
	char full[256], small[8];
	int k;
	(void)state;
	k = rlt_rule_format(&r, full, sizeof full);
	assert_int_equal(rlt_rule_format(&r, NULL, 0), k);
	assert_int_equal(rlt_rule_format(&r, small, sizeof small), k);
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_memory_equal(small, full, sizeof small - 1);
	/* a rule that cannot be printed so that it parses back says so */
	r.amount_den = 3;
	assert_int_equal(rlt_rule_format(&r, full, sizeof full), -1);
	assert_string_equal(full, "");
}

/* ---------------------------------------------------------------------------------------------
 * Round trip over random rules
 * ------------------------------------------------------------------------------------------- */

static const char *pick(uint64_t *s, const char *const *list, size_t n)
{
	return list[rlt_test_range(s, 0, n - 1)];
}
#define PICK(s, list) pick(s, list, sizeof list / sizeof list[0])

static void test_random_round_trip(void **state)
{
	static const char *const amounts[] = { "1", "10", "0.5", "2.25", "1000", "7", "0.001",
		                               "123456", "3.75", "99", "60", "0.125" };
	static const char *const byte_units[] = { "B",   "kB",  "MB",   "GB",   "KiB",
		                                  "MiB", "GiB", "kbit", "Mbit", "Gbit" };
	static const char *const periods[] = { "ms",  "100ms", "250ms", "s",    "2s",  "10s",
		                               "60s", "min",   "5min",  "h",    "24h", "1000ms" };
	static const char *const algos[] = { "token", "leaky", "fixed-window", "sliding-window",
		                             "sliding-log" };
	static const char *const errnos[] = { "ECONNREFUSED", "EAGAIN", "ENOBUFS", "EPERM",
		                              "EWOULDBLOCK", "ETIMEDOUT" };
	static const char *const scopes[] = { "process",
		                              "connection",
		                              "shared:a",
		                              "shared:web.1",
		                              "redis://localhost:6379/k",
		                              "redis://10.0.0.1:1/k-1",
		                              "redis://[2001:db8::1]:7000/x" };
	static const char *const peers[] = { "10.0.0.1", "10.9.8.7/8", "0.0.0.0/0", "::1",
		                             "fe80::1234/10", "2001:db8::/32" };
	static const char *const ports[] = { "80", "1-1024", "65535", "1000-1000", "443-8443" };
	static const char *const families[] = { "inet", "all", "unix" };
	static const char *const keys[] = { "peer", "peer/24", "peer/8,48", "peer/32,128",
		                            "port" };
	static const char *const durations[] = { "0", "10ns", "1.5us", "250ms", "2s", "1.25min",
		                                 "3h" };
	uint64_t seed = 7;
	int ok = 0;
	(void)state;
	for (int i = 0; i < 5000; i++) {
		enum rlt_var v = (enum rlt_var)rlt_test_range(&seed, 0, RLT_VAR_COUNT - 1);
		struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
		struct rlt_error e;
		char in[600];
		size_t n, len = 0;
		int unix_family = 0;

#define ADD(...) (len += (size_t)snprintf(in + len, sizeof in - len, __VA_ARGS__))
		if (v == CONNS) {
			ADD("%" PRIu64, rlt_test_range(&seed, 1, 100000));
		} else {
			const char *unit = "";
			if (v == SEND || v == RECV)
				unit = rlt_test_range(&seed, 0, 3) == 0 ? "msg" : PICK(&seed, byte_units);
			ADD("%s%s/%s", PICK(&seed, amounts), unit, PICK(&seed, periods));
			if (rlt_test_range(&seed, 0, 1))
				ADD(" algo=%s", PICK(&seed, algos));
			if (rlt_test_range(&seed, 0, 2) == 0)
				ADD(" burst=%" PRIu64 "%s", rlt_test_range(&seed, 1, 100000),
				    unit[0] == 'm' ? "msg" : "");
		}
		int reject = rlt_test_range(&seed, 0, 2) == 0;
		if (reject || rlt_test_range(&seed, 0, 2) == 0)
			ADD(" action=%s", reject ? "reject"
			                  : rlt_test_range(&seed, 0, 1) ? "dry-run" : "delay");
		if (!reject && rlt_test_range(&seed, 0, 2) == 0)
			ADD(" max-wait=%s", PICK(&seed, durations));
		if (rlt_test_range(&seed, 0, 2) == 0)
			ADD(" errno=%s", PICK(&seed, errnos));
		if (rlt_test_range(&seed, 0, 1)) {
			const char *sc = PICK(&seed, scopes);
			if (!(v == CONNS && strcmp(sc, "connection") == 0)) {
				ADD(" scope=%s", sc);
				if (strncmp(sc, "redis", 5) == 0 && rlt_test_range(&seed, 0, 1))
					ADD(" fallback=%s", rlt_test_range(&seed, 0, 1) ? "deny" : "allow");
			}
		}
		if (rlt_test_range(&seed, 0, 2) == 0) {
			const char *f = PICK(&seed, families);
			unix_family = strcmp(f, "unix") == 0;
			ADD(" family=%s", f);
		}
		if (!unix_family && rlt_test_range(&seed, 0, 2) == 0)
			ADD(" peer=%s", PICK(&seed, peers));
		if (!unix_family && rlt_test_range(&seed, 0, 2) == 0)
			ADD(" port=%s", PICK(&seed, ports));
		/* a connection scope takes no key: the parser says so, which the loop accepts */
		if (!unix_family && rlt_test_range(&seed, 0, 2) == 0) {
			ADD(" key=%s", PICK(&seed, keys));
			if (rlt_test_range(&seed, 0, 1))
				ADD(" keys=%" PRIu64, rlt_test_range(&seed, 1, RLT_KEYS_MAX));
		}
#undef ADD
		assert_true(len < sizeof in);
		/* the engine may refuse some (a window limit that is not whole, a rate too high):
		 * every success must round-trip, and every failure must explain itself */
		if (rlt_rules_parse(v, in, r, RLT_MAX_RULES_PER_VAR, &n, &e) != 0) {
			assert_int_equal(strncmp(e.msg, rlt_var_name(v), strlen(rlt_var_name(v))), 0);
			continue;
		}
		assert_int_equal(n, 1);
		assert_round_trip(&r[0]);
		ok++;
	}
	assert_true(ok > 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical_examples),
		cmocka_unit_test(test_format_snprintf_like),
		cmocka_unit_test(test_random_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
