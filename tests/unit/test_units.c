/* test_units.c: src/units.c: decimals, units, periods and durations, exact to the last digit. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "units.h"

#define S(str) (str), strlen(str)

static void test_gcd(void **state)
{
	(void)state;
	assert_int_equal(rlt__gcd(12, 18), 6);
	assert_int_equal(rlt__gcd(0, 7), 7);
	assert_int_equal(rlt__gcd(7, 0), 7);
	assert_int_equal(rlt__gcd(1ull << 40, 10000000000ull), 1024);
	assert_int_equal(rlt__gcd(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

static void test_decimal_ok(void **state)
{
	static const struct {
		const char *in;
		uint64_t digits;
		unsigned scale;
	} cases[] = {
		{ "0", 0, 0 },
		{ "10", 10, 0 },
		{ "007", 7, 0 },
		{ "0.5", 5, 1 },
		{ "1.50", 15, 1 },
		{ "2.000", 2, 0 },
		{ "0.0001", 1, 4 },
		{ "18446744073709551615", UINT64_MAX, 0 },
		{ "0.0000000000000000001", 1, 19 },
		{ "1.0000000000000000000000000", 1, 0 },
		{ "1844674407.3709551615", UINT64_MAX, 10 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt__decimal d = { 99, 99 };
		assert_int_equal(rlt__parse_decimal(S(cases[i].in), &d), 0);
		assert_true(d.digits == cases[i].digits);
		assert_int_equal(d.scale, cases[i].scale);
	}
}

static void test_decimal_bad(void **state)
{
	static const struct {
		const char *in;
		int rc;
	} cases[] = {
		{ "", -RLT__E_SYNTAX },
		{ ".5", -RLT__E_SYNTAX },
		{ "5.", -RLT__E_SYNTAX },
		{ ".", -RLT__E_SYNTAX },
		{ "1.2.3", -RLT__E_SYNTAX },
		{ "-1", -RLT__E_SYNTAX },
		{ "+1", -RLT__E_SYNTAX },
		{ "1e3", -RLT__E_SYNTAX },
		{ " 1", -RLT__E_SYNTAX },
		{ "1 ", -RLT__E_SYNTAX },
		{ "0x10", -RLT__E_SYNTAX },
		{ "18446744073709551616", -RLT__E_RANGE },
		{ "99999999999999999999", -RLT__E_RANGE },
		{ "0.00000000000000000001", -RLT__E_RANGE },
		{ "1844674407.3709551616", -RLT__E_RANGE },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt__decimal d;
		assert_int_equal(rlt__parse_decimal(S(cases[i].in), &d), cases[i].rc);
	}
}

static void test_count(void **state)
{
	uint64_t v = 0;
	(void)state;
	assert_int_equal(rlt__parse_count(S("1"), 10, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(rlt__parse_count(S("65535"), 65535, &v), 0);
	assert_int_equal(v, 65535);
	assert_int_equal(rlt__parse_count(S("65536"), 65535, &v), -RLT__E_RANGE);
	assert_int_equal(rlt__parse_count(S("0"), 65535, &v), -RLT__E_ZERO);
	assert_int_equal(rlt__parse_count(S("000"), 65535, &v), -RLT__E_ZERO);
	assert_int_equal(rlt__parse_count(S("1.5"), 65535, &v), -RLT__E_FRACTION);
	assert_int_equal(rlt__parse_count(S(""), 65535, &v), -RLT__E_SYNTAX);
	assert_int_equal(rlt__parse_count(S("x"), 65535, &v), -RLT__E_SYNTAX);
	assert_int_equal(rlt__parse_count(S("-1"), 65535, &v), -RLT__E_SYNTAX);
	assert_int_equal(rlt__parse_count(S("99999999999999999999"), UINT64_MAX, &v),
	                 -RLT__E_RANGE);
}

static void test_unit_table(void **state)
{
	static const struct {
		const char *name;
		enum rlt_unit kind;
		uint64_t mul;
	} cases[] = {
		{ "", RLT_UNIT_CALLS, 1 },
		{ "msg", RLT_UNIT_MSGS, 1 },
		{ "B", RLT_UNIT_BYTES, 1 },
		{ "kB", RLT_UNIT_BYTES, 1000 },
		{ "MB", RLT_UNIT_BYTES, 1000000 },
		{ "GB", RLT_UNIT_BYTES, 1000000000 },
		{ "KiB", RLT_UNIT_BYTES, 1024 },
		{ "MiB", RLT_UNIT_BYTES, 1048576 },
		{ "GiB", RLT_UNIT_BYTES, 1073741824 },
		{ "kbit", RLT_UNIT_BYTES, 125 },
		{ "Mbit", RLT_UNIT_BYTES, 125000 },
		{ "Gbit", RLT_UNIT_BYTES, 125000000 },
		{ "TB", RLT_UNIT_BYTES, 1000000000000ull },
		{ "TiB", RLT_UNIT_BYTES, 1099511627776ull },
		{ "Tbit", RLT_UNIT_BYTES, 125000000000ull },
	};
	static const char *const unknown[] = { "KB",  "kb",  "mb",   "mib", "kiB", "b",  "bit",
		                               "tb",  "Tib", "Kbit", "Msg", "msgs", "B ", " B",
		                               "MBs", "e3",  "bytes" };
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct rlt__unit *u = rlt__unit_lookup(S(cases[i].name));
		assert_non_null(u);
		assert_int_equal(u->kind, cases[i].kind);
		assert_true(u->mul == cases[i].mul);
	}
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
		assert_null(rlt__unit_lookup(S(unknown[i])));
}

static void test_amount(void **state)
{
	static const struct {
		const char *in;
		enum rlt_unit kind;
		uint64_t num, den;
	} cases[] = {
		{ "10", RLT_UNIT_CALLS, 10, 1 },
		{ "0.5", RLT_UNIT_CALLS, 1, 2 },
		{ "2.5msg", RLT_UNIT_MSGS, 5, 2 },
		{ "1MiB", RLT_UNIT_BYTES, 1048576, 1 },
		{ "0.1MB", RLT_UNIT_BYTES, 100000, 1 },
		{ "8Mbit", RLT_UNIT_BYTES, 1000000, 1 },
		{ "1.5kbit", RLT_UNIT_BYTES, 375, 2 },
		{ "0.001kbit", RLT_UNIT_BYTES, 1, 8 },
		{ "0.5KiB", RLT_UNIT_BYTES, 512, 1 },
		{ "0.3B", RLT_UNIT_BYTES, 3, 10 },
		{ "1.25GB", RLT_UNIT_BYTES, 1250000000, 1 },
		{ "0.000000000000000001GiB", RLT_UNIT_BYTES, 4096, 3814697265625ull },
		{ "17179869183GiB", RLT_UNIT_BYTES, 18446744072635809792ull, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct rlt__unit *u = NULL;
		uint64_t num = 0, den = 0;
		int rc = rlt__parse_amount(S(cases[i].in), &u, &num, &den);
		if (rc || num != cases[i].num || den != cases[i].den)
			fail_msg("%s: rc %d, %" PRIu64 "/%" PRIu64, cases[i].in, rc, num, den);
		assert_int_equal(u->kind, cases[i].kind);
	}
}

static void test_amount_bad(void **state)
{
	static const struct {
		const char *in;
		int rc;
	} cases[] = {
		{ "x", -RLT__E_SYNTAX },
		{ "", -RLT__E_SYNTAX },
		{ ".5B", -RLT__E_SYNTAX },
		{ "10KB", -RLT__E_UNIT },
		{ "10 B", -RLT__E_UNIT },
		{ "99999999999999999999GiB", -RLT__E_RANGE },
		{ "17179869184GiB", -RLT__E_RANGE },
		{ "184467440737095516.15kbit", -RLT__E_RANGE },
		/* exact, but its decimal in bytes would need more digits than 64 bits hold */
		{ "1844674407.3709551615KiB", -RLT__E_RANGE },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct rlt__unit *u;
		uint64_t num, den;
		int rc = rlt__parse_amount(S(cases[i].in), &u, &num, &den);
		if (rc != cases[i].rc)
			fail_msg("%s: rc %d, want %d", cases[i].in, rc, cases[i].rc);
	}
}

static void test_period(void **state)
{
	static const struct {
		const char *in;
		uint64_t ns;
		const char *canon;
	} cases[] = {
		{ "ms", 1000000ull, "ms" },
		{ "100ms", 100000000ull, "100ms" },
		{ "1000ms", 1000000000ull, "s" },
		{ "1500ms", 1500000000ull, "1500ms" },
		{ "s", 1000000000ull, "s" },
		{ "1s", 1000000000ull, "s" },
		{ "10s", 10000000000ull, "10s" },
		{ "60s", 60000000000ull, "min" },
		{ "90s", 90000000000ull, "90s" },
		{ "min", 60000000000ull, "min" },
		{ "2min", 120000000000ull, "2min" },
		{ "120min", 7200000000000ull, "2h" },
		{ "h", 3600000000000ull, "h" },
		{ "24h", 86400000000000ull, "24h" },
		{ "0010s", 10000000000ull, "10s" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t ns = 0;
		char buf[32];
		assert_int_equal(rlt__parse_period(S(cases[i].in), &ns), 0);
		assert_true(ns == cases[i].ns);
		assert_int_equal(rlt__format_period(buf, sizeof buf, ns), strlen(cases[i].canon));
		assert_string_equal(buf, cases[i].canon);
	}
}

static void test_period_bad(void **state)
{
	static const struct {
		const char *in;
		int rc;
	} cases[] = {
		{ "", -RLT__E_SYNTAX },
		{ "5", -RLT__E_SYNTAX },
		{ "0s", -RLT__E_ZERO },
		{ "0ms", -RLT__E_ZERO },
		{ "1.5s", -RLT__E_FRACTION },
		{ "sec", -RLT__E_UNIT },
		{ "S", -RLT__E_UNIT },
		{ "us", -RLT__E_UNIT },
		{ "ns", -RLT__E_UNIT },
		{ "m", -RLT__E_UNIT },
		{ "hr", -RLT__E_UNIT },
		{ "/s", -RLT__E_UNIT },
		{ "-1s", -RLT__E_UNIT },
		{ "s5", -RLT__E_UNIT },
		{ "10 s", -RLT__E_UNIT },
		{ "99999999999h", -RLT__E_RANGE },
		{ "99999999999999999999s", -RLT__E_RANGE },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t ns;
		int rc = rlt__parse_period(S(cases[i].in), &ns);
		if (rc != cases[i].rc)
			fail_msg("%s: rc %d, want %d", cases[i].in, rc, cases[i].rc);
	}
}

static void test_duration(void **state)
{
	static const struct {
		const char *in;
		uint64_t ns;
		const char *canon;
	} cases[] = {
		{ "0", 0, "0s" },
		{ "0s", 0, "0s" },
		{ "0.0ms", 0, "0s" },
		{ "10ns", 10, "10ns" },
		{ "250us", 250000, "250us" },
		{ "0.5us", 500, "500ns" },
		{ "1.5s", 1500000000ull, "1500ms" },
		{ "100ms", 100000000ull, "100ms" },
		{ "2min", 120000000000ull, "2min" },
		{ "0.5min", 30000000000ull, "30s" },
		{ "1h", 3600000000000ull, "1h" },
		{ "1.000000001s", 1000000001ull, "1000000001ns" },
		{ "5124095h", 5124095ull * 3600000000000ull, "5124095h" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t ns = 1;
		char buf[32];
		assert_int_equal(rlt__parse_duration(S(cases[i].in), &ns), 0);
		assert_true(ns == cases[i].ns);
		rlt__format_duration(buf, sizeof buf, ns);
		assert_string_equal(buf, cases[i].canon);
	}
}

static void test_duration_bad(void **state)
{
	static const struct {
		const char *in;
		int rc;
	} cases[] = {
		{ "", -RLT__E_SYNTAX },
		{ "s", -RLT__E_SYNTAX },
		{ "-1s", -RLT__E_SYNTAX },
		{ ".5s", -RLT__E_SYNTAX },
		{ "5", -RLT__E_UNIT },
		{ "5sec", -RLT__E_UNIT },
		{ "5 s", -RLT__E_UNIT },
		{ "0.5ns", -RLT__E_FRACTION },
		{ "0.0000001us", -RLT__E_FRACTION },
		{ "99999999999h", -RLT__E_RANGE },
		{ "18446744073709551615ns", -RLT__E_RANGE }, /* that is "none" */
		{ "99999999999999999999ns", -RLT__E_RANGE },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint64_t ns;
		int rc = rlt__parse_duration(S(cases[i].in), &ns);
		if (rc != cases[i].rc)
			fail_msg("%s: rc %d, want %d", cases[i].in, rc, cases[i].rc);
	}
}

static void test_format_decimal(void **state)
{
	static const struct {
		uint64_t num, den;
		const char *out;
	} cases[] = {
		{ 0, 1, "0" },
		{ 1, 1, "1" },
		{ 375, 2, "187.5" },
		{ 1, 8, "0.125" },
		{ 3, 10, "0.3" },
		{ 1, 10000000000000000000ull, "0.0000000000000000001" },
		{ UINT64_MAX, 1, "18446744073709551615" },
		{ UINT64_MAX, 10000000000ull, "1844674407.3709551615" },
		{ 4096, 3814697265625ull, "0.000000001073741824" },
	};
	char buf[64];
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int k = rlt__format_decimal(buf, sizeof buf, cases[i].num, cases[i].den);
		assert_int_equal(k, strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
	}
	/* No exact decimal, or one the parser could not read back. */
	assert_int_equal(rlt__format_decimal(buf, sizeof buf, 1, 3), -1);
	assert_int_equal(rlt__format_decimal(buf, sizeof buf, 1, 0), -1);
	assert_int_equal(rlt__format_decimal(buf, sizeof buf, 1, 1ull << 63), -1);
	assert_int_equal(rlt__format_decimal(buf, sizeof buf, UINT64_MAX, 8), -1);
	/* snprintf-like: the length needed, the start of the text. */
	assert_int_equal(rlt__format_decimal(buf, 3, 375, 2), 5);
	assert_string_equal(buf, "18");
	assert_int_equal(rlt__format_decimal(NULL, 0, 375, 2), 5);
}

static void test_format_time_bad(void **state)
{
	char buf[32];
	(void)state;
	assert_int_equal(rlt__format_period(buf, sizeof buf, 0), -1);
	assert_int_equal(rlt__format_period(buf, sizeof buf, 1500), -1);
	assert_int_equal(rlt__format_duration(buf, sizeof buf, 1), 3);
	assert_string_equal(buf, "1ns");
}

/* Whatever amount is accepted prints as a decimal that reads back to the same fraction. */
static void test_amount_round_trip(void **state)
{
	static const char *const unit_names[] = { "",    "msg",  "B",    "kB",   "MB",  "GB",
		                                  "KiB", "MiB",  "GiB",  "kbit", "Mbit", "Gbit" };
	uint64_t seed = 42;
	int accepted = 0;
	(void)state;
	for (int i = 0; i < 20000; i++) {
		char in[64], out[64];
		unsigned ip = (unsigned)rlt_test_range(&seed, 0, 12);
		unsigned fp = (unsigned)rlt_test_range(&seed, 0, 20);
		uint64_t a = rlt_test_rand(&seed) % 1000000000000ull;
		uint64_t b = rlt_test_rand(&seed);
		const char *un = unit_names[rlt_test_range(&seed, 0, 11)];
		const struct rlt__unit *u, *u2;
		uint64_t num, den, num2, den2;
		int k;
		if (ip < 12)
			a %= (uint64_t)1 << (ip * 3);
		if (fp == 0)
			k = snprintf(in, sizeof in, "%" PRIu64 "%s", a, un);
		else {
			uint64_t m = 1;
			for (unsigned j = 0; j < fp && j < 18; j++)
				m *= 10;
			k = snprintf(in, sizeof in, "%" PRIu64 ".%0*" PRIu64 "%s", a, (int)fp, b % m,
			             un);
		}
		assert_true(k > 0 && (size_t)k < sizeof in);
		if (rlt__parse_amount(in, (size_t)k, &u, &num, &den) != 0)
			continue;
		accepted++;
		k = rlt__format_decimal(out, sizeof out, num, den);
		assert_true(k > 0 && (size_t)k < sizeof out);
		assert_int_equal(rlt__parse_amount(out, (size_t)k, &u2, &num2, &den2), 0);
		if (num2 != num || den2 != den)
			fail_msg("%s -> %s: %" PRIu64 "/%" PRIu64 " != %" PRIu64 "/%" PRIu64, in, out,
			         num, den, num2, den2);
	}
	assert_true(accepted > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcd),
		cmocka_unit_test(test_decimal_ok),
		cmocka_unit_test(test_decimal_bad),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_unit_table),
		cmocka_unit_test(test_amount),
		cmocka_unit_test(test_amount_bad),
		cmocka_unit_test(test_period),
		cmocka_unit_test(test_period_bad),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_format_decimal),
		cmocka_unit_test(test_format_time_bad),
		cmocka_unit_test(test_amount_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
