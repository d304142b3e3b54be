/* test_rule_parse.c: src/rule_parse.c, src/rule_values.c and src/errno_names.c: the rule grammar of
 * rlthrottle(7) RULES, its keys and their values, and a variable of several rules. The rate's
 * units and periods are in test_rule_rates.c, the canonical form in test_rule_format.c, the
 * error messages in test_rule_errors.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rule_harness.h"

/* ---------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------- */

static void test_var_names(void **state)
{
	static const struct {
		enum rlt_var var;
		const char *name;
	} names[] = {
		{ RLT_VAR_CONNECT, "RLT_CONNECT" }, { RLT_VAR_ACCEPT, "RLT_ACCEPT" },
		{ RLT_VAR_SEND, "RLT_SEND" },       { RLT_VAR_RECV, "RLT_RECV" },
		{ RLT_VAR_CONNS, "RLT_CONNS" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		assert_string_equal(rlt_var_name(names[i].var), names[i].name);
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
		struct rlt_rule r = parse_rt(CONNECT, in);
		assert_int_equal(r.algo, cases[i].algo);
		assert_int_equal(r.params.algo, cases[i].algo);
		snprintf(in, sizeof in, "120msg/min algo=%s", cases[i].name);
		r = parse_rt(RECV, in);
		assert_int_equal(r.algo, cases[i].algo);
	}
	/* the sliding log is for calls and messages; its limit is at most RLT_LOG_MAX_LIMIT */
	struct rlt_rule r = parse1(CONNECT, "1000000/s algo=sliding-log");
	assert_true(r.params.limit == RLT_LOG_MAX_LIMIT);
}

static void test_burst(void **state)
{
	/* burst: the rule's as written, and the one in force (params.burst); ANY: not checked */
	const uint64_t ANY = UINT64_MAX;
	const struct {
		enum rlt_var var;
		const char *text;
		uint64_t burst, in_force;
	} cases[] = {
		{ SEND, "1MiB/s burst=64KiB", 65536, 65536 },
		{ SEND, "1MiB/s burst=1000", 1000, 1000 },
		{ SEND, "1MiB/s burst=1.5KiB", 1536, 1536 },
		{ RECV, "1MiB/s burst=8kbit algo=leaky", 1000, 1000 },
		{ SEND, "10msg/s burst=10", 10, 10 },
		{ SEND, "10msg/s burst=20msg", 20, 20 },
		{ CONNECT, "10/s burst=3", 3, 3 },
		/* windows: burst is checked, then ignored (rlthrottle(7) RULES), and the canonical form
		 * omits it */
		{ CONNECT, "120/min algo=fixed-window burst=5", 0, ANY },
		/* the default burst: one second of the rate, at least one unit */
		{ CONNECT, "1/h", ANY, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt_rule r = parse_rt(cases[i].var, cases[i].text);

		if ((cases[i].burst != ANY && r.burst != cases[i].burst) ||
		    (cases[i].in_force != ANY && r.params.burst != cases[i].in_force))
			fail_msg("%s: burst %" PRIu64 ", in force %" PRIu64, cases[i].text, r.burst,
			         r.params.burst);
	}
}

static void test_action_max_wait_errno(void **state)
{
	static const struct {
		const char *text;
		uint64_t ns;
	} waits[] = {
		{ "10/s action=delay max-wait=250ms", 250000000ull },
		{ "10/s max-wait=0", 0 },
		{ "10/s max-wait=1.5us", 1500 },
		{ "10/s max-wait=10ns", 10 },
		{ "10/s max-wait=2h", 7200 * NS_S },
	};
	struct rlt_rule r;
	(void)state;
	r = parse_rt(CONNECT, "10/s action=reject");
	assert_int_equal(r.action, RLT_ACTION_REJECT);
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
		r = parse_rt(CONNECT, waits[i].text);
		assert_true(r.max_wait_ns == waits[i].ns && r.params.max_wait_ns == waits[i].ns);
	}
	r = parse_rt(SEND, "1MB/s errno=EWOULDBLOCK");
	assert_int_equal(r.err, EAGAIN);
	r = parse_rt(SEND, "1MB/s errno=ETIMEDOUT action=reject");
	assert_int_equal(r.err, ETIMEDOUT);
}

static void test_scope(void **state)
{
	struct rlt_rule r;
	(void)state;
	r = parse_rt(CONNECT, "10/s scope=connection");
	assert_int_equal(r.scope, RLT_SCOPE_CONNECTION);
	r = parse1(CONNECT, "10/s scope=process");
	assert_int_equal(r.scope, RLT_SCOPE_PROCESS);
	r = parse_rt(CONNECT, "10/s scope=shared:web-1.api_x");
	assert_int_equal(r.scope, RLT_SCOPE_SHARED);
	assert_string_equal(r.scope_name, "web-1.api_x");
	r = parse1(CONNECT, "10/s scope=shared:...");
	assert_string_equal(r.scope_name, "...");
	r = parse_rt(SEND, "1MiB/s scope=redis://redis.example.com:6379/uploads");
	assert_int_equal(r.scope, RLT_SCOPE_REDIS);
	assert_string_equal(r.redis_host, "redis.example.com");
	assert_int_equal(r.redis_port, 6379);
	assert_string_equal(r.scope_name, "uploads");
	assert_int_equal(r.fallback, RLT_FALLBACK_LOCAL);
	assert_canonical(&r, " scope=redis://redis.example.com:6379/uploads fallback=local ", 1);
	r = parse_rt(SEND, "1MiB/s scope=redis://127.0.0.1:1/x fallback=deny");
	assert_string_equal(r.redis_host, "127.0.0.1");
	assert_int_equal(r.redis_port, 1);
	assert_int_equal(r.fallback, RLT_FALLBACK_DENY);
	r = parse_rt(SEND, "1MiB/s scope=redis://[::1]:65535/x fallback=allow");
	assert_string_equal(r.redis_host, "::1");
	assert_int_equal(r.redis_port, 65535);
	assert_int_equal(r.fallback, RLT_FALLBACK_ALLOW);
	assert_canonical(&r, " scope=redis://[::1]:65535/x fallback=allow ", 1);
	r = parse1(SEND, "1MiB/s scope=redis://localhost:6379/x");
	assert_string_equal(r.redis_host, "localhost");
}

static void test_peer_port_family(void **state)
{
	/* peer=: the family (0: not checked), the prefix, and the address as stored, masked (NULL:
	 * not checked) */
	static const struct {
		const char *text;
		int af;
		unsigned prefix;
		const char *addr;
	} peers[] = {
		{ "10/s peer=10.1.2.3/8", AF_INET, 8, "10.0.0.0" },
		{ "10/s peer=192.168.1.77/27", AF_INET, 27, "192.168.1.64" },
		{ "10/s peer=192.168.1.1", AF_INET, 32, NULL },
		{ "10/s peer=1.2.3.4/0", AF_INET, 0, NULL },
		{ "10/s peer=2001:db8:ffff::1/33", AF_INET6, 33, "2001:db8:8000::" },
		{ "10/s peer=::ffff:10.0.0.1", 0, 128, NULL },
	};
	static const struct {
		const char *text;
		unsigned lo, hi;
	} ports[] = {
		{ "10/s port=443", 443, 443 },
		{ "10/s port=1000-2000", 1000, 2000 },
		{ "10/s port=1-65535", 1, 65535 },
	};
	static const struct {
		const char *text;
		int family;
	} families[] = {
		{ "10/s family=unix", RLT_FAMILY_UNIX },
		{ "10/s family=all peer=::/0", RLT_FAMILY_ALL },
		{ "10/s family=inet", RLT_FAMILY_INET },
	};
	struct rlt_rule r;
	uint8_t want[16];
	(void)state;
	for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++) {
		r = parse_rt(CONNECT, peers[i].text);
		if (peers[i].af)
			assert_int_equal(r.peer_af, peers[i].af);
		assert_int_equal(r.peer_prefix, peers[i].prefix);
		if (peers[i].addr) {
			memset(want, 0, sizeof want);
			inet_pton(peers[i].af, peers[i].addr, want);
			assert_memory_equal(r.peer_addr, want, peers[i].af == AF_INET ? 4 : 16);
		}
	}
	r = parse1(CONNECT, "10/s peer=10.1.2.3/8");
	assert_canonical(&r, " peer=10.0.0.0/8 ", 1);
	/* /0: no address bit is kept */
	r = parse1(CONNECT, "10/s peer=1.2.3.4/0");
	memset(want, 0, sizeof want);
	assert_memory_equal(r.peer_addr, want, 16);
	for (size_t i = 0; i < sizeof ports / sizeof ports[0]; i++) {
		r = parse_rt(CONNECT, ports[i].text);
		assert_int_equal(r.port_lo, ports[i].lo);
		assert_int_equal(r.port_hi, ports[i].hi);
	}
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		r = parse_rt(CONNECT, families[i].text);
		assert_int_equal(r.family, families[i].family);
	}
}

static void test_key_keys_dry_run(void **state)
{
	struct rlt_rule r;
	(void)state;
	r = parse1(ACCEPT, "10/s");
	assert_int_equal(r.key, RLT_KEY_NONE);
	assert_int_equal(r.keys, 0);
	assert_canonical(&r, "key", 0);
	r = parse_rt(ACCEPT, "10/s burst=1 key=peer");
	assert_int_equal(r.key, RLT_KEY_PEER);
	assert_int_equal(r.key_prefix4, 32);
	assert_int_equal(r.key_prefix6, 128);
	assert_int_equal(r.keys, RLT_KEYS_DEFAULT);
	assert_canonical(&r, " key=peer keys=4096", 1);
	/* /24 alone: IPv6 at /64 */
	r = parse_rt(RECV, "1MiB/s key=peer/24");
	assert_int_equal(r.key_prefix4, 24);
	assert_int_equal(r.key_prefix6, 64);
	assert_canonical(&r, " key=peer/24,64 keys=4096", 1);
	r = parse_rt(SEND, "1MiB/s key=peer/24,56 keys=100");
	assert_int_equal(r.key_prefix4, 24);
	assert_int_equal(r.key_prefix6, 56);
	assert_int_equal(r.keys, 100);
	r = parse1(CONNECT, "10/s key=peer/32,128");
	assert_canonical(&r, " key=peer keys=", 1);
	r = parse_rt(CONNECT, "10/s key=peer/1,1 keys=1");
	assert_int_equal(r.key_prefix4, 1);
	assert_int_equal(r.keys, 1);
	r = parse_rt(CONNECT, "10/s key=port keys=1048576 scope=shared:k family=all");
	assert_int_equal(r.key, RLT_KEY_PORT);
	assert_int_equal(r.keys, RLT_KEYS_MAX);
	assert_canonical(&r, " key=port keys=1048576", 1);
	r = parse_rt(CONNS, "2 key=peer");
	assert_int_equal(r.key, RLT_KEY_PEER);
	r = parse_rt(RECV, "100KiB/s action=dry-run");
	assert_int_equal(r.action, RLT_ACTION_DRY_RUN);
	assert_canonical(&r, " action=dry-run ", 1);
	/* dry-run counts what delay with a max-wait would have done */
	r = parse_rt(RECV, "100KiB/s action=dry-run max-wait=1s key=peer/16");
	assert_true(r.max_wait_ns == NS_S);
	r = parse_rt(CONNS, "2 action=dry-run");
	assert_int_equal(r.action, RLT_ACTION_DRY_RUN);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_var_names),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_algo),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_action_max_wait_errno),
		cmocka_unit_test(test_scope),
		cmocka_unit_test(test_peer_port_family),
		cmocka_unit_test(test_key_keys_dry_run),
		cmocka_unit_test(test_several_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
