/* test_rule_parse.c: src/rule_parse.c and src/errno_names.c: the rule grammar of rlthrottle(7) RULES,
 * its defaults, its error messages and the canonical form. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rlthrottle.h"
#include "testutil.h"

#define CONNECT RLT_VAR_CONNECT
#define ACCEPT RLT_VAR_ACCEPT
#define SEND RLT_VAR_SEND
#define RECV RLT_VAR_RECV
#define CONNS RLT_VAR_CONNS

#define NS_S 1000000000ull

/* Parses one variable that must hold exactly one valid rule. */
static struct rlt_rule parse1(enum rlt_var v, const char *value)
{
	struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e = { "" };
	size_t n = 99;
	int rc = rlt_rules_parse(v, value, r, RLT_MAX_RULES_PER_VAR, &n, &e);

	if (rc != 0 || n != 1)
		fail_msg("%s=\"%s\": rc %d, n %zu: %s", rlt_var_name(v), value, rc, n, e.msg);
	return r[0];
}

static void format(const struct rlt_rule *r, char *buf, size_t len)
{
	int k = rlt_rule_format(r, buf, len);
	assert_true(k > 0 && (size_t)k < len);
	assert_int_equal(strlen(buf), (size_t)k);
}

/* Two rules are the same rule: every field that decides what happens, and the canonical text.
 * r->burst may differ (default vs. written out); the burst in force is params.burst. */
static void assert_same_rule(const struct rlt_rule *a, const struct rlt_rule *b)
{
	char fa[1024], fb[1024];

	assert_int_equal(a->var, b->var);
	assert_int_equal(a->unit, b->unit);
	assert_true(a->amount_num == b->amount_num);
	assert_true(a->amount_den == b->amount_den);
	assert_true(a->period_ns == b->period_ns);
	assert_int_equal(a->algo, b->algo);
	assert_int_equal(a->action, b->action);
	assert_true(a->max_wait_ns == b->max_wait_ns);
	assert_int_equal(a->err, b->err);
	assert_int_equal(a->scope, b->scope);
	assert_string_equal(a->scope_name, b->scope_name);
	assert_string_equal(a->redis_host, b->redis_host);
	assert_int_equal(a->redis_port, b->redis_port);
	assert_int_equal(a->fallback, b->fallback);
	assert_int_equal(a->peer_af, b->peer_af);
	assert_memory_equal(a->peer_addr, b->peer_addr, sizeof a->peer_addr);
	assert_int_equal(a->peer_prefix, b->peer_prefix);
	assert_int_equal(a->port_lo, b->port_lo);
	assert_int_equal(a->port_hi, b->port_hi);
	assert_int_equal(a->family, b->family);
	assert_int_equal(a->key, b->key);
	assert_int_equal(a->key_prefix4, b->key_prefix4);
	assert_int_equal(a->key_prefix6, b->key_prefix6);
	assert_int_equal(a->keys, b->keys);
	assert_int_equal(a->params.algo, b->params.algo);
	assert_true(a->params.rate_num == b->params.rate_num);
	assert_true(a->params.rate_den_ns == b->params.rate_den_ns);
	assert_true(a->params.burst == b->params.burst);
	assert_true(a->params.max_wait_ns == b->params.max_wait_ns);
	assert_true(a->params.ticks_per_unit == b->params.ticks_per_unit);
	assert_true(a->params.tick_num == b->params.tick_num);
	assert_true(a->params.tick_den == b->params.tick_den);
	assert_true(a->params.tau == b->params.tau);
	assert_true(a->params.limit == b->params.limit);
	assert_true(a->params.window_ns == b->params.window_ns);
	assert_true(a->params.sub_ns == b->params.sub_ns);
	format(a, fa, sizeof fa);
	format(b, fb, sizeof fb);
	assert_string_equal(fa, fb);
}

/* Formats r, parses that back, and checks it is the same rule. */
static void assert_round_trip(const struct rlt_rule *r)
{
	char buf[1024];
	struct rlt_rule back;

	format(r, buf, sizeof buf);
	back = parse1(r->var, buf);
	assert_same_rule(r, &back);
}

/* ---------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------- */

static void test_var_names(void **state)
{
	(void)state;
	assert_string_equal(rlt_var_name(RLT_VAR_CONNECT), "RLT_CONNECT");
	assert_string_equal(rlt_var_name(RLT_VAR_ACCEPT), "RLT_ACCEPT");
	assert_string_equal(rlt_var_name(RLT_VAR_SEND), "RLT_SEND");
	assert_string_equal(rlt_var_name(RLT_VAR_RECV), "RLT_RECV");
	assert_string_equal(rlt_var_name(RLT_VAR_CONNS), "RLT_CONNS");
	assert_null(rlt_var_name(RLT_VAR_COUNT));
	assert_null(rlt_var_name((enum rlt_var)-1));
}

static void test_errno_names(void **state)
{
	(void)state;
	assert_string_equal(rlt_errno_name(ECONNREFUSED), "ECONNREFUSED");
	assert_string_equal(rlt_errno_name(EPERM), "EPERM");
	assert_string_equal(rlt_errno_name(EHWPOISON), "EHWPOISON");
	/* an alias prints as the usual name and parses to the same value */
	assert_string_equal(rlt_errno_name(EWOULDBLOCK), "EAGAIN");
	assert_string_equal(rlt_errno_name(EDEADLOCK), "EDEADLK");
	assert_string_equal(rlt_errno_name(ENOTSUP), "EOPNOTSUPP");
	assert_int_equal(rlt_errno_from_name("EWOULDBLOCK"), EAGAIN);
	assert_int_equal(rlt_errno_from_name("ENOTSUP"), EOPNOTSUPP);
	assert_int_equal(rlt_errno_from_name("ETIMEDOUT"), ETIMEDOUT);
	assert_null(rlt_errno_name(0));
	assert_null(rlt_errno_name(-1));
	assert_null(rlt_errno_name(100000));
	assert_int_equal(rlt_errno_from_name("econnrefused"), 0);
	assert_int_equal(rlt_errno_from_name(""), 0);
	assert_int_equal(rlt_errno_from_name(NULL), 0);
	/* every value from 1 to EHWPOISON has a name that maps back to it */
	for (int e = 1; e <= EHWPOISON; e++) {
		const char *name = rlt_errno_name(e);
		if (e == 41 || e == 58) /* unused on Linux */
			continue;
		assert_non_null(name);
		assert_int_equal(rlt_errno_from_name(name), e);
	}
}

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
		struct rlt_rule r = parse1(cases[i].v, cases[i].in);
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
		assert_round_trip(&r);
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
			struct rlt_rule r = parse1(v, cases[i].in);
			assert_int_equal(r.unit, cases[i].unit);
			assert_true(r.amount_num == cases[i].num);
			assert_true(r.amount_den == cases[i].den);
			assert_round_trip(&r);
		}
	}
	/* calls: no unit, fractions allowed */
	struct rlt_rule r = parse1(CONNECT, "0.5/s");
	assert_true(r.amount_num == 1 && r.amount_den == 2);
	assert_round_trip(&r);
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
		struct rlt_rule r = parse1(CONNECT, cases[i].in);
		char buf[512];
		assert_true(r.period_ns == cases[i].ns);
		format(&r, buf, sizeof buf);
		assert_memory_equal(buf, cases[i].canon_rate, strlen(cases[i].canon_rate));
		assert_round_trip(&r);
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
	r = parse1(CONNS, " 5 action=delay max-wait=2s errno=EMFILE scope=shared:web peer=10.0.0.0/8 "
	                  "port=443 family=all ");
	assert_int_equal(r.action, RLT_ACTION_DELAY);
	assert_true(r.max_wait_ns == 2 * NS_S);
	assert_int_equal(r.err, EMFILE);
	assert_int_equal(r.scope, RLT_SCOPE_SHARED);
	assert_string_equal(r.scope_name, "web");
	assert_int_equal(r.family, RLT_FAMILY_ALL);
	assert_round_trip(&r);
	r = parse1(CONNS, "1 scope=redis://cache:6379/pool fallback=allow");
	assert_int_equal(r.scope, RLT_SCOPE_REDIS);
	assert_round_trip(&r);
}

/* ---------------------------------------------------------------------------------------------
 * Keys
 * ------------------------------------------------------------------------------------------- */

static void test_algo(void **state)
{
	static const struct {
		const char *name;
		enum rlt_algo algo;
	} cases[] = {
		{ "token", RLT_ALGO_TOKEN },
		{ "leaky", RLT_ALGO_LEAKY },
		{ "fixed-window", RLT_ALGO_FIXED_WINDOW },
		{ "sliding-window", RLT_ALGO_SLIDING_WINDOW },
		{ "sliding-log", RLT_ALGO_SLIDING_LOG },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char in[64];
		snprintf(in, sizeof in, "120/min algo=%s", cases[i].name);
		struct rlt_rule r = parse1(CONNECT, in);
		assert_int_equal(r.algo, cases[i].algo);
		assert_int_equal(r.params.algo, cases[i].algo);
		assert_round_trip(&r);
		snprintf(in, sizeof in, "120msg/min algo=%s", cases[i].name);
		r = parse1(RECV, in);
		assert_int_equal(r.algo, cases[i].algo);
		assert_round_trip(&r);
	}
	/* the sliding log is for calls and messages; its limit is at most RLT_LOG_MAX_LIMIT */
	struct rlt_rule r = parse1(CONNECT, "1000000/s algo=sliding-log");
	assert_true(r.params.limit == RLT_LOG_MAX_LIMIT);
}

static void test_burst(void **state)
{
	struct rlt_rule r;
	(void)state;
	r = parse1(SEND, "1MiB/s burst=64KiB");
	assert_true(r.burst == 65536 && r.params.burst == 65536);
	assert_round_trip(&r);
	r = parse1(SEND, "1MiB/s burst=1000");
	assert_true(r.burst == 1000);
	r = parse1(SEND, "1MiB/s burst=1.5KiB");
	assert_true(r.burst == 1536);
	r = parse1(RECV, "1MiB/s burst=8kbit algo=leaky");
	assert_true(r.burst == 1000 && r.params.burst == 1000);
	assert_round_trip(&r);
	r = parse1(SEND, "10msg/s burst=10");
	assert_true(r.burst == 10);
	r = parse1(SEND, "10msg/s burst=20msg");
	assert_true(r.burst == 20);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s burst=3");
	assert_true(r.burst == 3 && r.params.burst == 3);
	assert_round_trip(&r);
	/* windows: burst is checked, then ignored (rlthrottle(7) RULES), and the canonical form omits it */
	r = parse1(CONNECT, "120/min algo=fixed-window burst=5");
	assert_true(r.burst == 0);
	assert_round_trip(&r);
	/* the default burst: one second of the rate, at least one unit */
	r = parse1(CONNECT, "1/h");
	assert_true(r.params.burst == 1);
	assert_round_trip(&r);
}

static void test_action_max_wait_errno(void **state)
{
	struct rlt_rule r;
	(void)state;
	r = parse1(CONNECT, "10/s action=reject");
	assert_int_equal(r.action, RLT_ACTION_REJECT);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s action=delay max-wait=250ms");
	assert_true(r.max_wait_ns == 250000000ull && r.params.max_wait_ns == 250000000ull);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s max-wait=0");
	assert_true(r.max_wait_ns == 0);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s max-wait=1.5us");
	assert_true(r.max_wait_ns == 1500);
	r = parse1(CONNECT, "10/s max-wait=10ns");
	assert_true(r.max_wait_ns == 10);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s max-wait=2h");
	assert_true(r.max_wait_ns == 7200 * NS_S);
	r = parse1(SEND, "1MB/s errno=EWOULDBLOCK");
	assert_int_equal(r.err, EAGAIN);
	assert_round_trip(&r);
	r = parse1(SEND, "1MB/s errno=ETIMEDOUT action=reject");
	assert_int_equal(r.err, ETIMEDOUT);
	assert_round_trip(&r);
}

static void test_scope(void **state)
{
	struct rlt_rule r;
	char buf[1024];
	(void)state;
	r = parse1(CONNECT, "10/s scope=connection");
	assert_int_equal(r.scope, RLT_SCOPE_CONNECTION);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s scope=process");
	assert_int_equal(r.scope, RLT_SCOPE_PROCESS);
	r = parse1(CONNECT, "10/s scope=shared:web-1.api_x");
	assert_int_equal(r.scope, RLT_SCOPE_SHARED);
	assert_string_equal(r.scope_name, "web-1.api_x");
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s scope=shared:...");
	assert_string_equal(r.scope_name, "...");
	r = parse1(SEND, "1MiB/s scope=redis://redis.example.com:6379/uploads");
	assert_int_equal(r.scope, RLT_SCOPE_REDIS);
	assert_string_equal(r.redis_host, "redis.example.com");
	assert_int_equal(r.redis_port, 6379);
	assert_string_equal(r.scope_name, "uploads");
	assert_int_equal(r.fallback, RLT_FALLBACK_LOCAL);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " scope=redis://redis.example.com:6379/uploads fallback=local "));
	assert_round_trip(&r);
	r = parse1(SEND, "1MiB/s scope=redis://127.0.0.1:1/x fallback=deny");
	assert_string_equal(r.redis_host, "127.0.0.1");
	assert_int_equal(r.redis_port, 1);
	assert_int_equal(r.fallback, RLT_FALLBACK_DENY);
	assert_round_trip(&r);
	r = parse1(SEND, "1MiB/s scope=redis://[::1]:65535/x fallback=allow");
	assert_string_equal(r.redis_host, "::1");
	assert_int_equal(r.redis_port, 65535);
	assert_int_equal(r.fallback, RLT_FALLBACK_ALLOW);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " scope=redis://[::1]:65535/x fallback=allow "));
	assert_round_trip(&r);
	r = parse1(SEND, "1MiB/s scope=redis://localhost:6379/x");
	assert_string_equal(r.redis_host, "localhost");
}

static void test_peer_port_family(void **state)
{
	struct rlt_rule r;
	uint8_t want[16];
	char buf[1024];
	(void)state;
	r = parse1(CONNECT, "10/s peer=10.1.2.3/8");
	assert_int_equal(r.peer_af, AF_INET);
	assert_int_equal(r.peer_prefix, 8);
	inet_pton(AF_INET, "10.0.0.0", want);
	assert_memory_equal(r.peer_addr, want, 4); /* stored masked */
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " peer=10.0.0.0/8 "));
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s peer=192.168.1.77/27");
	inet_pton(AF_INET, "192.168.1.64", want);
	assert_memory_equal(r.peer_addr, want, 4);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s peer=192.168.1.1");
	assert_int_equal(r.peer_prefix, 32);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s peer=1.2.3.4/0");
	assert_int_equal(r.peer_prefix, 0);
	memset(want, 0, sizeof want);
	assert_memory_equal(r.peer_addr, want, 16);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s peer=2001:db8:ffff::1/33");
	assert_int_equal(r.peer_af, AF_INET6);
	assert_int_equal(r.peer_prefix, 33);
	inet_pton(AF_INET6, "2001:db8:8000::", want);
	assert_memory_equal(r.peer_addr, want, 16);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s peer=::ffff:10.0.0.1");
	assert_int_equal(r.peer_prefix, 128);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s port=443");
	assert_int_equal(r.port_lo, 443);
	assert_int_equal(r.port_hi, 443);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s port=1000-2000");
	assert_int_equal(r.port_lo, 1000);
	assert_int_equal(r.port_hi, 2000);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s port=1-65535");
	assert_int_equal(r.port_lo, 1);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s family=unix");
	assert_int_equal(r.family, RLT_FAMILY_UNIX);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s family=all peer=::/0");
	assert_int_equal(r.family, RLT_FAMILY_ALL);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s family=inet");
	assert_int_equal(r.family, RLT_FAMILY_INET);
}

static void test_key_keys_dry_run(void **state)
{
	struct rlt_rule r;
	char buf[1024];
	(void)state;
	r = parse1(ACCEPT, "10/s");
	assert_int_equal(r.key, RLT_KEY_NONE);
	assert_int_equal(r.keys, 0);
	format(&r, buf, sizeof buf);
	assert_null(strstr(buf, "key"));
	r = parse1(ACCEPT, "10/s burst=1 key=peer");
	assert_int_equal(r.key, RLT_KEY_PEER);
	assert_int_equal(r.key_prefix4, 32);
	assert_int_equal(r.key_prefix6, 128);
	assert_int_equal(r.keys, RLT_KEYS_DEFAULT);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " key=peer keys=4096"));
	assert_round_trip(&r);
	/* /24 alone: IPv6 at /64 */
	r = parse1(RECV, "1MiB/s key=peer/24");
	assert_int_equal(r.key_prefix4, 24);
	assert_int_equal(r.key_prefix6, 64);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " key=peer/24,64 keys=4096"));
	assert_round_trip(&r);
	r = parse1(SEND, "1MiB/s key=peer/24,56 keys=100");
	assert_int_equal(r.key_prefix4, 24);
	assert_int_equal(r.key_prefix6, 56);
	assert_int_equal(r.keys, 100);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s key=peer/32,128");
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " key=peer keys="));
	r = parse1(CONNECT, "10/s key=peer/1,1 keys=1");
	assert_int_equal(r.key_prefix4, 1);
	assert_int_equal(r.keys, 1);
	assert_round_trip(&r);
	r = parse1(CONNECT, "10/s key=port keys=1048576 scope=shared:k family=all");
	assert_int_equal(r.key, RLT_KEY_PORT);
	assert_int_equal(r.keys, RLT_KEYS_MAX);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " key=port keys=1048576"));
	assert_round_trip(&r);
	r = parse1(CONNS, "2 key=peer");
	assert_int_equal(r.key, RLT_KEY_PEER);
	assert_round_trip(&r);
	r = parse1(RECV, "100KiB/s action=dry-run");
	assert_int_equal(r.action, RLT_ACTION_DRY_RUN);
	format(&r, buf, sizeof buf);
	assert_non_null(strstr(buf, " action=dry-run "));
	assert_round_trip(&r);
	/* dry-run counts what delay with a max-wait would have done */
	r = parse1(RECV, "100KiB/s action=dry-run max-wait=1s key=peer/16");
	assert_true(r.max_wait_ns == NS_S);
	assert_round_trip(&r);
	r = parse1(CONNS, "2 action=dry-run");
	assert_int_equal(r.action, RLT_ACTION_DRY_RUN);
	assert_round_trip(&r);
}

/* ---------------------------------------------------------------------------------------------
 * Several rules, layout
 * ------------------------------------------------------------------------------------------- */

static void test_several_rules(void **state)
{
	struct rlt_rule r[RLT_MAX_RULES_PER_VAR];
	struct rlt_error e;
	size_t n = 0;
	char big[2048];
	(void)state;
	assert_int_equal(rlt_rules_parse(CONNECT, " 10/s ;\t120/min algo=fixed-window ; ", r,
	                                 RLT_MAX_RULES_PER_VAR, &n, &e),
	                 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].text, "10/s");
	assert_string_equal(r[1].text, "120/min algo=fixed-window");
	assert_int_equal(r[1].algo, RLT_ALGO_FIXED_WINDOW);
	assert_int_equal(rlt_rules_parse(SEND, "1MiB/s\talgo=leaky\t\tburst=2MiB", r,
	                                 RLT_MAX_RULES_PER_VAR, &n, &e),
	                 0);
	assert_int_equal(n, 1);
	assert_true(r[0].params.burst == 2 * 1048576);
	/* an empty rule is no rule, wherever it is: before, between or after the ';' */
	static const char *const gaps[] = { ";10/s;20/s", "10/s;;20/s", "10/s; ;20/s;",
		                            " ; 10/s ;\t; 20/s ; ", "10/s;20/s;" };
	for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
		assert_int_equal(rlt_rules_parse(CONNECT, gaps[i], r, RLT_MAX_RULES_PER_VAR, &n, &e),
		                 0);
		assert_int_equal(n, 2);
		assert_string_equal(r[0].text, "10/s");
		assert_string_equal(r[1].text, "20/s");
	}
	assert_int_equal(rlt_rules_parse(SEND, ";1MiB/s", r, RLT_MAX_RULES_PER_VAR, &n, &e), 0);
	assert_int_equal(n, 1);
	/* exactly RLT_MAX_RULES_PER_VAR rules */
	big[0] = '\0';
	for (int i = 0; i < RLT_MAX_RULES_PER_VAR; i++)
		snprintf(big + strlen(big), sizeof big - strlen(big), "%d/s port=%d;", i + 1, i + 1);
	assert_int_equal(rlt_rules_parse(CONNECT, big, r, RLT_MAX_RULES_PER_VAR, &n, &e), 0);
	assert_int_equal(n, RLT_MAX_RULES_PER_VAR);
	assert_int_equal(r[15].port_lo, 16);
	/* a smaller array is a smaller limit */
	assert_int_equal(rlt_rules_parse(CONNECT, "1/s;2/s;3/s", r, 2, &n, &e), -EINVAL);
	assert_int_equal(n, 0);
	assert_non_null(strstr(e.msg, "more than 2 rules"));
	/* a rule of exactly RLT_RULE_TEXT_MAX bytes */
	memset(big, 0, sizeof big);
	strcpy(big, "10/s scope=shared:");
	memset(big + strlen(big), 'x', RLT_RULE_TEXT_MAX - strlen(big));
	assert_int_equal(strlen(big), RLT_RULE_TEXT_MAX);
	assert_int_equal(rlt_rules_parse(CONNECT, big, r, 1, &n, &e), -EINVAL); /* NAME > 200 */
	memset(big, 0, sizeof big);
	strcpy(big, "10/s");
	memset(big + 4, ' ', RLT_RULE_TEXT_MAX - 4 - 4);
	strcat(big, "    ");
	assert_int_equal(rlt_rules_parse(CONNECT, big, r, 1, &n, &e), 0);
}

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
		struct rlt_rule r = parse1(cases[i].v, cases[i].in);
		format(&r, buf, sizeof buf);
		assert_string_equal(buf, cases[i].out);
		assert_round_trip(&r);
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

static void test_malformed(void **state)
{
	static char huge[6000], longrule[700], longname[300], longhost[600], many[400];
	static const struct {
		enum rlt_var v;
		const char *in, *want;
	} cases[] = {
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
	(void)state;
	repeat(huge, sizeof huge, "10/s", ' ', 4996, "");
	repeat(longrule, sizeof longrule, "10/s", '\t', 600, "algo=token");
	repeat(longname, sizeof longname, "10/s scope=shared:", 'n', 201, "");
	many[0] = '\0';
	for (int i = 0; i < 17; i++)
		strcat(many, "1/s;");
	/* 4 labels of 63: a valid host of 255 bytes, but the canonical rule would not fit */
	{
		char lab[64], name[201];
		memset(lab, 'a', 63);
		lab[63] = '\0';
		memset(name, 'n', 200);
		name[200] = '\0';
		snprintf(longhost, sizeof longhost, "1/s scope=redis://%s.%s.%s.%.61s:6379/%s", lab, lab,
		         lab, lab, name);
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_error(cases[i].v, cases[i].in, cases[i].want);
	assert_true(sizeof cases / sizeof cases[0] >= 60);
}

/* A long rule with a long wrong part still fits the message and cuts it cleanly. */
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
		cmocka_unit_test(test_var_names),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_defaults_per_variable),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_periods),
		cmocka_unit_test(test_conns),
		cmocka_unit_test(test_algo),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_action_max_wait_errno),
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_peer_port_family),
		cmocka_unit_test(test_key_keys_dry_run),
		cmocka_unit_test(test_several_rules),
		cmocka_unit_test(test_canonical_examples),
		cmocka_unit_test(test_format_snprintf_like),
		cmocka_unit_test(test_random_round_trip),
		cmocka_unit_test(test_spec_message),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_long_quotes),
		cmocka_unit_test(test_redis_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
