/* test_policy.c: loading rules into a ruleset, matching calls to rules, pieces. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "pacing.h"
#include "testutil.h"
#include "policy.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

static void load(const char *connect, const char *send, const char *recv, const char *conns)
{
	rs_build((const char *[RLT_VAR_COUNT]){connect, NULL, send, recv, conns}, 0);
}

/* The peer of address A (IPv6 when it has a colon) and PORT, as a hook would see it. */
static struct rlt__peer peer(const char *a, uint16_t port)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct rlt__peer p;

	if (strchr(a, ':')) {
		inet_pton(AF_INET6, a, &in6.sin6_addr);
		rlt__peer_from_sockaddr(&p, (struct sockaddr *)&in6, sizeof in6);
	} else {
		inet_pton(AF_INET, a, &in.sin_addr);
		rlt__peer_from_sockaddr(&p, (struct sockaddr *)&in, sizeof in);
	}
	return p;
}

static void peer_from_sockaddr(void **s)
{
	struct rlt__peer p = peer("::ffff:10.1.2.3", 443);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	(void)s;
	/* a v4-mapped address is IPv4 to the filters */
	assert_int_equal(p.af, AF_INET);
	assert_int_equal(p.port, 443);
	assert_memory_equal(p.addr, "\x0a\x01\x02\x03", 4);
	p = peer("2001:db8::1", 80);
	assert_int_equal(p.af, AF_INET6);
	rlt__peer_from_sockaddr(&p, (struct sockaddr *)&un, sizeof un);
	assert_int_equal(p.af, AF_UNIX);
	rlt__peer_from_sockaddr(&p, NULL, 0);
	assert_int_equal(p.af, 0);
	/* a truncated address is not trusted */
	struct sockaddr_in in = {.sin_family = AF_INET};
	rlt__peer_from_sockaddr(&p, (struct sockaddr *)&in, 4);
	assert_int_equal(p.af, 0);
}

static void filters(void **s)
{
	(void)s;
	load("10/s; 5/s peer=127.0.0.2; 5/s peer=10.0.0.0/8 port=80-89; 1/s family=unix; "
	     "2/s family=all; 3/s peer=2001:db8::/32",
	     NULL, NULL, NULL);
	assert_int_equal(rs.n[RLT_VAR_CONNECT], 6);
	struct rlt__peer unixp = {.af = AF_UNIX};
	/* a peer of unknown family is held only by family=all */
	assert_int_equal(rlt__match(&rs, RLT_VAR_CONNECT, &(struct rlt__peer){0}), 0x10);
	assert_int_equal(rlt__match(&rs, RLT_VAR_CONNECT, &unixp), 0x18);
	/* the rules (by bit) that hold a peer */
	static const struct {
		const char *addr;
		uint16_t port;
		uint32_t mask;
	} peers[] = {
		{ "127.0.0.1", 5000, 0x11 },  { "127.0.0.2", 5000, 0x13 },
		{ "10.200.0.1", 85, 0x15 },   { "10.200.0.1", 90, 0x11 },
		{ "11.0.0.1", 85, 0x11 },     { "2001:db8:ffff::1", 1, 0x31 },
		{ "2001:db9::1", 1, 0x11 },
	};
	struct rlt__peer p;
	for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++) {
		uint32_t got;

		p = peer(peers[i].addr, peers[i].port);
		got = rlt__match(&rs, RLT_VAR_CONNECT, &p);
		if (got != peers[i].mask)
			fail_msg("%s port %u: rules 0x%x, not 0x%x", peers[i].addr, peers[i].port, got,
			         peers[i].mask);
	}
	/* no rule for a variable: nothing matches */
	assert_int_equal(rlt__match(&rs, RLT_VAR_SEND, &p), 0);
}

/* What both fronts ask of a socket: its family stands for a peer not known yet, and accept
 * rules see the remote address with the local (listening) port. */
static void socket_and_accept_masks(void **s)
{
	const char *v[RLT_VAR_COUNT] = {"10/s; 1/s family=unix", "5/s port=8080; 7/s peer=127.0.0.9",
	                                "1MiB/s", NULL, "4 family=unix"};
	uint32_t mask[RLT_VAR_COUNT];
	(void)s;
	rs_build(v, 0);
	struct rlt__peer none = {0};
	rlt__match_socket(&rs, &none, AF_UNIX, mask);
	assert_int_equal(mask[RLT_VAR_CONNECT], 0x2);
	assert_int_equal(mask[RLT_VAR_SEND], 0); /* family=inet by default */
	assert_int_equal(mask[RLT_VAR_RECV], 0);
	assert_int_equal(mask[RLT_VAR_CONNS], 0x1);
	struct rlt__peer p = peer("127.0.0.1", 40000);
	rlt__match_socket(&rs, &p, AF_INET, mask);
	assert_int_equal(mask[RLT_VAR_CONNECT], 0x1);
	assert_int_equal(mask[RLT_VAR_SEND], 0x1);
	assert_int_equal(mask[RLT_VAR_CONNS], 0);
	assert_int_equal(rlt__match_on(&rs, RLT_VAR_CONNS, &none, AF_UNIX), 0x1);
	assert_int_equal(rlt__match_accept(&rs, &p, 8080), 0x1);
	assert_int_equal(rlt__match_accept(&rs, &p, 9090), 0);
	p = peer("127.0.0.9", 8080);
	assert_int_equal(rlt__match_accept(&rs, &p, 8080), 0x3);
}

/* What a listener can ask before it takes a connection: the accept rules every client meets
 * (no peer= filter, no key=peer), on its family and its port. */
static void accept_rules_every_client_meets(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, "5/s port=8080; 7/s peer=127.0.0.9; 2/s key=peer; "
	                                      "3/s key=port; 1/s family=unix; 9/s family=all"};
	(void)s;
	rs_build(v, 0);
	assert_int_equal(rlt__match_accept_sure(&rs, AF_INET, 8080), 0x29);
	assert_int_equal(rlt__match_accept_sure(&rs, AF_INET6, 8080), 0x29);
	assert_int_equal(rlt__match_accept_sure(&rs, AF_INET, 9090), 0x28);
	assert_int_equal(rlt__match_accept_sure(&rs, AF_UNIX, 0), 0x30);
	/* each is among the rules a connection of that listener matches, from any client */
	struct rlt__peer p = peer("127.0.0.9", 40000);
	assert_int_equal(rlt__match_accept(&rs, &p, 8080) & 0x29, 0x29);
	/* peer= and key=peer depend on the client: such an accept may queue its connections */
	assert_int_equal(rlt__accept_by_client(&rs), 1);
	const char *sure[RLT_VAR_COUNT] = {NULL, "5/s port=8080; 3/s key=port"};
	const char *peer_only[RLT_VAR_COUNT] = {NULL, "5/s; 7/s peer=10.0.0.0/8"};
	rs_build(sure, 0);
	assert_int_equal(rlt__accept_by_client(&rs), 0);
	rs_build(peer_only, 0);
	assert_int_equal(rlt__accept_by_client(&rs), 1);
}

static void pieces(void **s)
{
	(void)s;
	/* 10 ms of 1 MiB/s is 10485 bytes; 10 ms of 1 kB/s is 10, raised to 256 */
	load(NULL, "1MiB/s; 1kB/s; 100msg/s", "100B/s burst=50", NULL);
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 0x1), 10485);
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 0x2), 256);
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 0x3), 256);
	/* messages do not split bytes */
	assert_int_equal(rlt__piece(&rs, RLT_VAR_SEND, 0x4), UINT64_MAX);
	/* never above the burst */
	assert_int_equal(rlt__piece(&rs, RLT_VAR_RECV, 0x1), 50);
}

static void wholes(void **s)
{
	(void)s;
	/* the burst of each algorithm: token's depth (default one second), leaky's capacity,
	 * a window's limit; a max-wait bounds it by what the rate gives within it (1 MiB/s for
	 * 100 ms: 104857); a reject rule, which never waits, its burst; messages do not
	 * bound bytes */
	load(NULL,
	     "1MiB/s; 100kB/s burst=20kB; 1MiB/s algo=leaky burst=64KiB; "
	     "50000B/s algo=fixed-window; 50000B/s algo=sliding-window; 1MiB/s max-wait=100ms; "
	     "1MiB/s action=reject; 100msg/s; 1kB/s burst=100",
	     NULL, NULL);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x1, 0), 1048576);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x2, 0), 20000);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x4, 0), 65536);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x8, 0), 50000);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x10, 0), 50000);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x20, 0), 104857);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x40, 0), 1048576);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x80, 0), UINT64_MAX);
	/* the smallest of the rules that apply */
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x1 | 0x2 | 0x80, 0), 20000);
	/* never below a piece (the burst itself here: 100 bytes, below 256) */
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x100, 0), 100);
	/* non-blocking: one piece */
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x1, 1), 10485);
	assert_int_equal(rlt__whole(&rs, RLT_VAR_SEND, 0x1 | 0x2, 1), 1000);
}

static void unsupported_and_bad(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, NULL, NULL, "5 scope=redis://127.0.0.1:1/pool"};
	struct rlt_error err;
	(void)s;
	memset(&rs, 0, sizeof rs);
	assert_int_equal(rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err), -ENOTSUP);
	assert_non_null(strstr(err.msg, "RLT_CONNS"));
	assert_non_null(strstr(err.msg, "cannot have a redis:// scope"));
	v[4] = NULL;
	v[2] = "1000/s";
	memset(&rs, 0, sizeof rs);
	assert_int_equal(rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "needs a unit"));
	/* parsed but not built yet: refused at load, never accepted and ignored */
	v[2] = "1MiB/s key=peer algo=sliding-window";
	memset(&rs, 0, sizeof rs);
	assert_int_equal(rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err), -ENOTSUP);
	assert_non_null(strstr(err.msg, "RLT_SEND=\"1MiB/s key=peer algo=sliding-window\": key= is "
	                                  "supported with algo=token, leaky or fixed-window only"));
	v[2] = NULL;
	v[4] = "2 action=dry-run"; /* built: a count that never refuses */
	memset(&rs, 0, sizeof rs);
	assert_int_equal(rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err), 0);
	assert_int_equal(rs.n[RLT_VAR_CONNS], 1);
	v[4] = NULL;
	/* empty is unset */
	v[2] = " ";
	memset(&rs, 0, sizeof rs);
	assert_int_equal(rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err), 0);
	assert_int_equal(rs.n[RLT_VAR_SEND], 0);
}

static int warnings;
static void count_warning(const char *msg, void *ctx)
{
	(void)ctx;
	assert_non_null(strstr(msg, "RLT_SEND"));
	warnings++;
}

static void ignore_bad_keeps_the_good(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "1MiB/s; 1000/s; 5msg/s algo=nope; 2kB/s",
	                                NULL, NULL};
	struct rlt_error err;
	(void)s;
	memset(&rs, 0, sizeof rs);
	warnings = 0;
	assert_int_equal(rlt__ruleset_build(&rs, v, 1, count_warning, NULL, &err), 0);
	assert_int_equal(warnings, 2);
	assert_int_equal(rs.n[RLT_VAR_SEND], 2);
	assert_string_equal(rs.rules[RLT_VAR_SEND][1].rule.text, "2kB/s");
}

static void connection_scope_layout(void **s)
{
	(void)s;
	load(NULL, "1MiB/s scope=connection; 2MiB/s; 5msg/s scope=connection algo=sliding-window",
	     NULL, NULL);
	assert_null(rs.rules[RLT_VAR_SEND][0].v0.state);
	assert_non_null(rs.rules[RLT_VAR_SEND][1].v0.state);
	assert_null(rs.rules[RLT_VAR_SEND][2].v0.state);
	assert_int_equal(rs.rules[RLT_VAR_SEND][0].conn_off, 0);
	assert_int_equal(rs.rules[RLT_VAR_SEND][2].conn_off, 64);
	assert_true(rs.conn_block_size >= 64 + rlt_state_size(&rs.rules[RLT_VAR_SEND][2].rule.params));
	assert_int_equal(rs.conn_block_size % 64, 0);
}

/* One rule at a time, as RLT_ON_ERROR=ignore reads a variable (and --check after it): blank
 * rules and stray ';' are no rule, and an over-long rule is cut, not run into the next. */
static void rules_one_at_a_time(void **state)
{
	static char big[RLT_VALUE_MAX + 100];
	char one[RLT_VALUE_MAX + 1];
	const char *p = " ;1MiB/s; \t ;;10/s burst=2 ;";
	(void)state;
	assert_int_equal(rlt__rule_next(&p, one), 1);
	assert_string_equal(one, "1MiB/s");
	assert_int_equal(rlt__rule_next(&p, one), 1);
	assert_string_equal(one, "10/s burst=2 ");
	assert_int_equal(rlt__rule_next(&p, one), 0);
	assert_int_equal(*p, '\0');
	p = "";
	assert_int_equal(rlt__rule_next(&p, one), 0);
	memset(big, 'x', sizeof big - 1);
	big[RLT_VALUE_MAX + 50] = ';';
	p = big;
	assert_int_equal(rlt__rule_next(&p, one), 1);
	assert_int_equal(strlen(one), RLT_VALUE_MAX);
	assert_int_equal(rlt__rule_next(&p, one), 1);
	assert_int_equal(strlen(one), 48); /* after the ";" to the end of big */
	assert_int_equal(rlt__rule_next(&p, one), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(peer_from_sockaddr),
		cmocka_unit_test(filters),
		cmocka_unit_test(socket_and_accept_masks),
		cmocka_unit_test(accept_rules_every_client_meets),
		cmocka_unit_test(pieces),
		cmocka_unit_test(wholes),
		cmocka_unit_test(unsupported_and_bad),
		cmocka_unit_test(ignore_bad_keeps_the_good),
		cmocka_unit_test(connection_scope_layout),
		cmocka_unit_test(rules_one_at_a_time),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
