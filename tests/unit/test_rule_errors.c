/* test_rule_errors.c: src/rule_parse.c, src/rule_values.c and src/rule_text.c: what a wrong rule
 * says (rlthrottle(7) RULES): one message VAR="rule": detail, the wrong part quoted, escaped and
 * cut, and a redis:// password in none of it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rule_harness.h"

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Parses value and requires -EINVAL, no rules, and a message VAR="...": ... containing want,
 * printable and NUL-terminated. */
static void expect_error(enum rlt_var v, const char *value, const char *want)
{
	struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e;
	size_t n = 99;
	char prefix[32];
	int rc;

	memset(e.msg, 'Z', sizeof e.msg);
	rc = rlt_rules_parse(v, value, r, RLT_MAX_RULES_PER_VAR, &n, &e);
	if (rc != -EINVAL)
		fail_msg("%s=\"%.80s\": rc %d, want -EINVAL", rlt_var_name(v), value, rc);
	assert_int_equal(n, 0);
	assert_non_null(memchr(e.msg, '\0', sizeof e.msg));
	snprintf(prefix, sizeof prefix, "%s=\"", rlt_var_name(v));
	if (strncmp(e.msg, prefix, strlen(prefix)) != 0 || !strstr(e.msg, "\": ") ||
	    !strstr(e.msg, want))
		fail_msg("%s=\"%.80s\":\n  got  %s\n  want ...%s...", rlt_var_name(v), value, e.msg,
		         want);
	for (const char *p = e.msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			fail_msg("unprintable byte in message: %s", e.msg);
	assert_null(strstr(e.msg, "rlthrottle:"));
}

static void test_spec_message(void **state)
{
	struct rlt_rule r[4];
	struct rlt_error e;
	size_t n;
	(void)state;
	assert_int_equal(rlt_rules_parse(SEND, "1000/s", r, 4, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "RLT_SEND=\"1000/s\": a rate for bytes or messages needs a unit, "
	                           "e.g. 1000B/s or 1000msg/s");
	assert_int_equal(rlt_rules_parse(CONNECT, "10/s burst=abc", r, 4, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "RLT_CONNECT=\"10/s burst=abc\": burst: \"abc\" is not an amount");
	assert_int_equal(rlt_rules_parse(RECV, "5MB/s algo=bucket", r, 4, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "RLT_RECV=\"5MB/s algo=bucket\": algo: unknown \"bucket\" "
	                           "(token, leaky, fixed-window, sliding-window, sliding-log)");
	assert_int_equal(rlt_rules_parse(CONNECT, "10B/s", r, 4, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "RLT_CONNECT=\"10B/s\": connect rules count calls: write 10/s, "
	                           "not 10B/s");
	/* errors leave the NULL and bad-variable cases defined too */
	assert_int_equal(rlt_rules_parse(SEND, NULL, r, 4, &n, &e), -EINVAL);
	assert_string_equal(e.msg, "RLT_SEND=\"\": is empty");
	assert_int_equal(rlt_rules_parse(RLT_VAR_COUNT, "10/s", r, 4, &n, &e), -EINVAL);
	assert_int_equal(rlt_rules_parse(CONNECT, "10/s", r, 4, &n, NULL), 0);
	assert_int_equal(rlt_rules_parse(CONNECT, "x", r, 4, &n, NULL), -EINVAL);
}

static char *repeat(char *buf, size_t cap, const char *head, char c, size_t count,
                    const char *tail)
{
	size_t h = strlen(head);
	assert_true(h + count + strlen(tail) < cap);
	memcpy(buf, head, h);
	memset(buf + h, c, count);
	strcpy(buf + h + count, tail);
	return buf;
}

/* The inputs too long to write in the table, filled by fill_long_inputs. */
static char huge[6000], longrule[700], longname[300], longhost[600], many[400];

/* Each wrong value and a part of what its message must say, by what is wrong in it. */
static const struct {
	enum rlt_var v;
	const char *in, *want;
} malformed[] = {
	/* the value as a whole */
	{ SEND, "", "is empty" },
	{ SEND, "   \t ", "is empty" },
	{ CONNECT, huge, "is too long (more than 4096 bytes)" },
	{ CONNECT, longrule, "rule is too long" },
	{ CONNECT, many, "has more than 16 rules (a variable holds at most 16)" },
	{ CONNECT, ";", "is empty" },
	{ CONNECT, " ; ;\t", "is empty" },
	{ CONNECT, "10/1\xc2\xb5s", "byte \\xc2 at position 5 is not printable ASCII" },
	{ CONNECT, "10/s\n", "byte \\x0a at position 5" },
	{ CONNECT, "10/s; 5/s\x01", "RLT_CONNECT=\"5/s\\x01\": byte \\x01 at position 4" },
	{ CONNECT, "10/s \x7f", "byte \\x7f" },
	{ CONNECT, "10/s\r", "byte \\x0d" },
	/* the rate */
	{ CONNECT, "-5/s", "rate: \"-5\" is not an amount" },
	{ CONNECT, "+5/s", "rate: \"+5\" is not an amount" },
	{ CONNECT, ".5/s", "rate: \".5\" is not an amount" },
	{ CONNECT, "5./s", "rate: \"5.\" is not an amount" },
	{ CONNECT, "ten/s", "rate: \"ten\" is not an amount" },
	{ CONNECT, "1e3/s", "rate: unknown unit \"e3\" in \"1e3\"" },
	{ CONNECT, "1,000/s", "unknown unit \",000\"" },
	{ CONNECT, "10 /s", "rate: \"10 /s\" has a space in it" },
	{ CONNECT, "10/ s", "rate: \"10/ s\" has a space in it" },
	{ CONNECT, "10", "rate: \"10\" has no period" },
	{ CONNECT, "/s", "rate: no amount before \"/\"" },
	{ CONNECT, "10/", "rate: no period after \"/\" in \"10/\"" },
	{ CONNECT, "10/0s", "period: \"0s\" is zero" },
	{ CONNECT, "0/s", "rate: \"0/s\" lets nothing through" },
	{ CONNECT, "0.000/s", "lets nothing through" },
	{ CONNECT, "10/sec", "period: \"sec\" is not a period" },
	{ CONNECT, "10/S", "period: \"S\" is not a period" },
	{ CONNECT, "10//s", "period: \"/s\" is not a period" },
	{ CONNECT, "10/min/s", "period: \"min/s\"" },
	{ CONNECT, "10/1.5s", "period: \"1.5s\" is not a whole number" },
	{ CONNECT, "10/5", "period: \"5\" is not a period" },
	{ CONNECT, "10/99999999999h", "period: \"99999999999h\" is too long" },
	{ CONNECT, "10B/s", "connect rules count calls: write 10/s, not 10B/s" },
	{ ACCEPT, "10msg/s", "accept rules count connections: write 10/s, not 10msg/s" },
	{ SEND, "5/100ms", "needs a unit, e.g. 5B/100ms or 5msg/100ms" },
	{ RECV, "10KB/s", "rate: unknown unit \"KB\"" },
	{ RECV, "10mib/s", "rate: unknown unit \"mib\"" },
	{ RECV, "10bit/s", "rate: unknown unit \"bit\"" },
	{ SEND, "99999999999999999999GiB/s", "\"99999999999999999999GiB\" is too large" },
	{ SEND, "17179869184GiB/s", "\"17179869184GiB\" is too large" },
	{ SEND, "0.00000000000000000001B/s", "too many digits" },
	{ RECV, "1000001TB/s", "too high (at most 10^18 units per second)" },
	{ RECV, "100GB/s algo=fixed-window", "too high for a window" },
	{ SEND, "1TB/s burst=1B", "burst is too small for so high a rate" },
	{ CONNECT, "0.5/s algo=fixed-window", "whole number" },
	/* keys */
	{ CONNECT, "10/s bogus=1", "unknown key \"bogus\"" },
	{ CONNECT, "10/s Algo=token", "unknown key \"Algo\"" },
	{ CONNECT, "10/s algo=token algo=leaky", "algo is given twice" },
	{ SEND, "1MiB/s burst=64KiB burst=1", "burst is given twice" },
	{ CONNECT, "10/s algo", "\"algo\" is not key=value" },
	{ CONNECT, "10/s errno=EAGAIN extra", "\"extra\" is not key=value" },
	{ CONNECT, "10/s algo=", "algo: no value after \"=\"" },
	{ CONNECT, "10/s =token", "\"=token\" has no key" },
	{ RECV, "5MB/s algo=bucket", "algo: unknown \"bucket\"" },
	{ CONNECT, "10/s algo=TOKEN", "algo: unknown \"TOKEN\"" },
	{ SEND, "1MiB/s algo=sliding-log", "sliding-log counts calls and messages, not bytes" },
	{ CONNECT, "2000000/s algo=sliding-log", "at most 1000000" },
	{ CONNECT, "10/s burst=abc", "burst: \"abc\" is not an amount" },
	{ CONNECT, "10/s burst=0", "burst: \"0\" is zero" },
	{ CONNECT, "10/s burst=-1", "burst: \"-1\" is not an amount" },
	{ SEND, "1MiB/s burst=0.5B", "burst: \"0.5B\" is not a whole number of bytes" },
	{ SEND, "1MiB/s burst=10msg", "burst: \"10msg\" is not in bytes" },
	{ SEND, "10msg/s burst=1KiB", "burst: \"1KiB\" is not in messages" },
	{ CONNECT, "10/s burst=10B", "burst: \"10B\": connect rules count calls" },
	{ SEND, "1MiB/s burst=10XB", "burst: unknown unit \"XB\"" },
	{ SEND, "1MiB/s burst=99999999999999999999", "burst: \"99999999999999999999\" is too large" },
	{ CONNECT, "10/s action=drop", "action: unknown \"drop\" (delay, reject, dry-run)" },
	{ CONNECT, "10/s max-wait=5", "max-wait: \"5\" needs a unit" },
	{ CONNECT, "10/s max-wait=5sec", "max-wait: unknown unit in \"5sec\"" },
	{ CONNECT, "10/s max-wait=-1s", "max-wait: \"-1s\" is not a duration" },
	{ CONNECT, "10/s max-wait=0.5ns", "max-wait: \"0.5ns\" is finer than a nanosecond" },
	{ CONNECT, "10/s max-wait=99999999999h", "max-wait: \"99999999999h\" is too long" },
	{ CONNECT, "10/s action=reject max-wait=1s", "max-wait applies only with action=delay" },
	{ CONNECT, "10/s errno=EFOO", "errno: unknown \"EFOO\"" },
	{ CONNECT, "10/s errno=econnrefused", "errno: unknown \"econnrefused\"" },
	{ CONNECT, "10/s errno=111", "errno: unknown \"111\"" },
	{ CONNECT, "10/s scope=global", "scope: unknown \"global\"" },
	{ CONNECT, "10/s scope=\"x\"", "scope: unknown \"\\\"x\\\"\"" },
	{ CONNECT, "10/s scope=shared:", "scope: \"shared:\" needs a NAME" },
	{ CONNECT, "10/s scope=shared:a/b", "scope: NAME \"a/b\" must not contain \"/\"" },
	{ CONNECT, "10/s scope=shared:../x", "must not contain \"/\"" },
	{ CONNECT, "10/s scope=shared:..", "scope: NAME \"..\" is not allowed" },
	{ CONNECT, "10/s scope=shared:.", "scope: NAME \".\" is not allowed" },
	{ CONNECT, "10/s scope=shared:a*b", "scope: NAME \"a*b\" has \"*\"" },
	{ CONNECT, longname, "is longer than 200 bytes" },
	{ CONNECT, "10/s scope=redis://localhost/foo", "needs a port" },
	{ CONNECT, "10/s scope=redis://localhost:0/foo", "port \"0\" is not in 1..65535" },
	{ CONNECT, "10/s scope=redis://localhost:70000/foo", "port \"70000\" is not in 1..65535" },
	{ CONNECT, "10/s scope=redis://localhost:/foo", "port \"\" in" },
	{ CONNECT, "10/s scope=redis://h:63x9/a", "port \"63x9\" in" },
	{ CONNECT, "10/s scope=redis://localhost:6379", "needs a NAME after the port" },
	{ CONNECT, "10/s scope=redis://localhost:6379/", "needs a NAME" },
	{ CONNECT, "10/s scope=redis://:6379/x", "has no host" },
	{ CONNECT, "10/s scope=redis://[::1:6379/x", "has \"[\" without \"]\"" },
	{ CONNECT, "10/s scope=redis://[zz]:6379/x", "scope: \"zz\" is not an IPv6 address" },
	{ CONNECT, "10/s scope=redis://[::1]/x", "needs a port" },
	{ CONNECT, "10/s scope=redis://999.1.1.1:6379/x", "\"999.1.1.1\" is not a host name" },
	{ CONNECT, "10/s scope=redis://a..b:1/x", "\"a..b\" is not a host name" },
	{ CONNECT, "10/s scope=redis://-a:1/x", "\"-a\" is not a host name" },
	{ CONNECT, "10/s scope=redis://u@h:1/x", "names a password as redis://USER:PASSWORD@" },
	{ CONNECT, "10/s scope=redis://h:6379/a/b", "NAME \"a/b\" must not contain \"/\"" },
	{ CONNECT, "10/s scope=redis://h:6379/..", "NAME \"..\" is not allowed" },
	{ CONNECT, longhost, "would be longer than 512 bytes" },
	{ CONNECT, "10/s scope=Process", "scope: unknown \"Process\"" },
	{ CONNECT, "10/s fallback=deny", "fallback applies only to a redis:// scope" },
	{ CONNECT, "10/s scope=shared:x fallback=local", "fallback applies only" },
	{ CONNECT, "10/s scope=redis://h:1/n fallback=maybe", "fallback: unknown \"maybe\"" },
	{ CONNECT, "10/s peer=1.2.3", "peer: \"1.2.3\" is not an IPv4 or IPv6 address" },
	{ CONNECT, "10/s peer=example.com", "peer: \"example.com\" is not an IPv4" },
	{ CONNECT, "10/s peer=10.0.0.0/33", "peer: prefix \"/33\" is not in 0..32 for IPv4" },
	{ CONNECT, "10/s peer=::1/129", "peer: prefix \"/129\" is not in 0..128 for IPv6" },
	{ CONNECT, "10/s peer=10.0.0.0/", "peer: prefix \"/\"" },
	{ CONNECT, "10/s peer=10.0.0.0/-1", "peer: prefix \"/-1\"" },
	{ CONNECT, "10/s peer=/8", "peer: \"\" is not an IPv4" },
	{ CONNECT, "10/s peer=1.2.3.4.5", "peer: \"1.2.3.4.5\"" },
	{ CONNECT, "10/s peer=[::1]", "peer: \"[::1]\"" },
	{ CONNECT, "10/s port=0", "port: \"0\" is not in 1..65535" },
	{ CONNECT, "10/s port=70000", "port: \"70000\" is not in 1..65535" },
	{ CONNECT, "10/s port=0-80", "port: \"0-80\" is not in 1..65535" },
	{ CONNECT, "10/s port=2000-1000", "port: \"2000-1000\" is an inverted range: write 1000-2000" },
	{ CONNECT, "10/s port=80-", "port: \"80-\" is not a port or a range N-M" },
	{ CONNECT, "10/s port=http", "port: \"http\" is not a port" },
	{ CONNECT, "10/s port=1-2-3", "port: \"1-2-3\"" },
	{ CONNECT, "10/s family=inet6", "family: unknown \"inet6\" (inet, unix, all)" },
	{ CONNECT, "10/s family=unix peer=1.2.3.4", "peer does not apply to family=unix" },
	{ CONNECT, "10/s family=unix port=80", "port does not apply to family=unix" },
	/* key and keys */
	{ ACCEPT, "10/s key=peer/33", "key: prefix \"/33\" is not in 1..32 for IPv4" },
	{ ACCEPT, "10/s key=peer/24,129", "key: prefix \"/129\" is not in 1..128 for IPv6" },
	{ ACCEPT, "10/s key=peer/0", "key: prefix \"/0\" is not in 1..32 for IPv4" },
	{ ACCEPT, "10/s key=peer/", "key: prefix \"/\" is not in 1..32 for IPv4" },
	{ ACCEPT, "10/s key=peer/24,", "key: prefix \"/\" is not in 1..128 for IPv6" },
	{ ACCEPT, "10/s key=peer/x", "key: prefix \"/x\" is not in 1..32" },
	{ ACCEPT, "10/s key=bogus", "key: unknown \"bogus\" (peer, peer/P4, peer/P4,P6, port)" },
	{ ACCEPT, "10/s key=peers", "key: unknown \"peers\"" },
	{ ACCEPT, "10/s key=port/24", "key: unknown \"port/24\"" },
	{ ACCEPT, "10/s key=peer keys=0", "keys: \"0\" is not a count in 1..1048576" },
	{ ACCEPT, "10/s key=peer keys=1048577", "keys: \"1048577\" is not a count in 1..1048576" },
	{ ACCEPT, "10/s key=peer keys=99999999999999999999999", "keys: " },
	{ ACCEPT, "10/s key=peer keys=-1", "keys: \"-1\" is not a count" },
	{ ACCEPT, "10/s keys=10", "keys applies only with key=" },
	{ ACCEPT, "10/s key=peer key=port", "key is given twice" },
	{ SEND, "1MiB/s key=peer scope=connection", "key does not apply to scope=connection" },
	{ SEND, "1MiB/s key=port family=unix", "key does not apply to family=unix: a unix socket has no port" },
	{ SEND, "1MiB/s action=dryrun", "action: unknown \"dryrun\" (delay, reject, dry-run)" },
	/* RLT_CONNS */
	{ CONNS, "50 scope=connection", "scope: connection makes no sense for RLT_CONNS" },
	{ CONNS, "50 algo=token", "algo does not apply: RLT_CONNS limits connections" },
	{ CONNS, "50 burst=5", "burst does not apply" },
	{ CONNS, "50/s", "not a rate" },
	{ CONNS, "0", "the limit must be at least 1" },
	{ CONNS, "1.5", "\"1.5\" is not a whole number of connections" },
	{ CONNS, "abc", "\"abc\" is not a number of connections" },
	{ CONNS, "-1", "\"-1\" is not a number of connections" },
	{ CONNS, "50MB", "\"50MB\" is not a number of connections" },
	{ CONNS, "99999999999999999999", "is too large" },
	{ CONNS, "50 fallback=deny", "fallback applies only" },
};

static void fill_long_inputs(void)
{
	char lab[64], name[201];

	repeat(huge, sizeof huge, "10/s", ' ', 4996, "");
	repeat(longrule, sizeof longrule, "10/s", '\t', 600, "algo=token");
	repeat(longname, sizeof longname, "10/s scope=shared:", 'n', 201, "");
	many[0] = '\0';
	for (int i = 0; i < 17; i++)
		strcat(many, "1/s;");
	/* 4 labels of 63: a valid host of 255 bytes, but the canonical rule would not fit */
	memset(lab, 'a', 63);
	lab[63] = '\0';
	memset(name, 'n', 200);
	name[200] = '\0';
	snprintf(longhost, sizeof longhost, "1/s scope=redis://%s.%s.%s.%.61s:6379/%s", lab, lab, lab,
	         lab, name);
}

static void test_malformed(void **state)
{
	(void)state;
	fill_long_inputs();
	for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		expect_error(malformed[i].v, malformed[i].in, malformed[i].want);
	assert_true(sizeof malformed / sizeof malformed[0] >= 60);
}

/* redis://USER:PASSWORD@HOST:PORT/NAME: AUTH's arguments, %XX decoded; the password shows in
 * no message, text or canonical form. */
static void test_redis_auth(void **st)
{
	struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e;
	char buf[1024], rule[400];
	size_t n;
	(void)st;

	r[0] = parse1(SEND, "1MiB/s scope=redis://:s3cr%25t@127.0.0.1:6379/x");
	assert_string_equal(r[0].redis_user, "");
	assert_string_equal(r[0].redis_pass, "s3cr%t");
	assert_string_equal(r[0].redis_host, "127.0.0.1");
	assert_int_equal(r[0].redis_port, 6379);
	assert_string_equal(r[0].text, "1MiB/s scope=redis://:***@127.0.0.1:6379/x");
	format(&r[0], buf, sizeof buf);
	assert_non_null(strstr(buf, " scope=redis://:***@127.0.0.1:6379/x "));
	assert_null(strstr(buf, "s3cr"));

	/* an ACL user; '@', ':' and '/' in the password need no escape, %20 and %3B do */
	r[0] = parse1(SEND, "1MiB/s scope=redis://app%2Fw:p@ss:w/rd%20%3b@[::1]:1/x fallback=deny");
	assert_string_equal(r[0].redis_user, "app/w");
	assert_string_equal(r[0].redis_pass, "p@ss:w/rd ;");
	assert_string_equal(r[0].redis_host, "::1");
	assert_int_equal(r[0].redis_port, 1);
	assert_int_equal(r[0].fallback, RLT_FALLBACK_DENY);
	assert_string_equal(r[0].text, "1MiB/s scope=redis://app%2Fw:***@[::1]:1/x fallback=deny");
	format(&r[0], buf, sizeof buf);
	assert_non_null(strstr(buf, " scope=redis://app%2Fw:***@[::1]:1/x fallback=deny "));
	assert_null(strstr(buf, "rd"));
	r[0] = parse1(SEND, "1MiB/s scope=redis://localhost:6379/x");
	assert_string_equal(r[0].redis_pass, "");
	assert_string_equal(r[0].redis_user, "");

	/* errors: the password is never quoted, even when another part is wrong */
	static const char *const bad[][2] = {
		{ "1MiB/s scope=redis://u:hunter2@h/x", "needs a port" },
		{ "1MiB/s scope=redis://u:hunter2@h:99999/x", "not in 1..65535" },
		{ "1MiB/s scope=redis://u:hunter2@h:1/a/b", "must not contain" },
		{ "1MiB/s scope=redis://u:hunter2@h:1/x burst=xyz", "burst" },
		{ "1MiB/s scope=redis://u:hunter2%zz@h:1/x", "not %XX" },
		{ "1MiB/s scope=redis://u:hunter2%00@h:1/x", "not %XX" },
		{ "1MiB/s scope=redis://u:@h:1/x", "password is empty" },
		{ "1MiB/s scope=redis://hunter2@h:1/x", "names a password as" },
		{ "1MiB/s; 1MiB/s scope=redis://u:hunter2@h:1/x; ", "" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = rlt_rules_parse(RLT_VAR_SEND, bad[i][0], r, RLT_MAX_RULES_PER_VAR, &n, &e);
		if (!bad[i][1][0]) {
			assert_int_equal(rc, 0);
			assert_null(strstr(r[1].text, "hunter2"));
			continue;
		}
		if (rc != -EINVAL || !strstr(e.msg, bad[i][1]) || strstr(e.msg, "hunter2"))
			fail_msg("%s:\n  rc %d, got %s\n  want ...%s..., no password", bad[i][0], rc,
			         e.msg, bad[i][1]);
	}
	strcpy(rule, "1MiB/s scope=redis://:");
	memset(rule + strlen(rule), 'p', 200);
	strcpy(rule + strlen("1MiB/s scope=redis://:") + 200, "@h:1/x");
	assert_int_equal(rlt_rules_parse(RLT_VAR_SEND, rule, r, RLT_MAX_RULES_PER_VAR, &n, &e),
	                 -EINVAL);
	assert_non_null(strstr(e.msg, "longer than 128 bytes"));
	assert_null(strstr(e.msg, "ppp"));
}

/* A long rule with a long wrong part still fits the message and cuts it cleanly. */
static void test_long_quotes(void **state)
{
	struct rlt_rule r[1];
	struct rlt_error e;
	char in[520];
	size_t n;
	(void)state;
	memset(in, 0, sizeof in);
	strcpy(in, "10/s algo=");
	memset(in + strlen(in), '"', 500);
	assert_int_equal(rlt_rules_parse(CONNECT, in, r, 1, &n, &e), -EINVAL);
	assert_true(strlen(e.msg) < sizeof e.msg);
	assert_non_null(strstr(e.msg, "...\": algo: unknown \"\\\"\\\""));
	assert_non_null(strstr(e.msg, "\\\"...\" (token"));
	/* an escape is never cut in half */
	assert_null(strstr(e.msg, "\\...\""));
	memset(in, 0, sizeof in);
	strcpy(in, "10/s scope=shared:");
	memset(in + strlen(in), '\x01', 300);
	assert_int_equal(rlt_rules_parse(CONNECT, in, r, 1, &n, &e), -EINVAL);
	assert_true(strlen(e.msg) < sizeof e.msg);
	assert_non_null(strstr(e.msg, "\\x01\\x01...\": byte \\x01 at position 19"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_message),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_long_quotes),
		cmocka_unit_test(test_redis_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
