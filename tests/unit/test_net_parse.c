/* test_net_parse.c: the RLT_NET grammar (rlthrottle(7) NETWORK CONDITIONS): every kind and key
 * read as written, the canonical form read back to the same condition, and each mistake one
 * line naming the variable and the wrong part. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "testutil.h"
#include "net.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct rlt__net_set parse_ok(const char *v)
{
	struct rlt__net_set s;
	struct rlt_error e = {{0}};
	int rc = rlt__net_parse(v, &s, &e);
	if (rc != 0)
		fail_msg("%s: %s", v, e.msg);
	return s;
}

static void parse_bad(const char *v, const char *part)
{
	struct rlt__net_set s;
	struct rlt_error e = {{0}};
	assert_int_equal(rlt__net_parse(v, &s, &e), -EINVAL);
	assert_int_equal(s.n, 0);
	if (strncmp(e.msg, "RLT_NET=\"", 9) != 0 || !strstr(e.msg, part) || strchr(e.msg, '\n'))
		fail_msg("%s: message \"%s\" lacks \"%s\"", v, e.msg, part);
}

/* Condition I as parsed, C, against WANT field by field (what it does, not its matchers or
 * text): every field a kind does not read is 0, and p= is 100% unless WANT says otherwise. */
static void assert_cond(unsigned i, const struct rlt__net_cond *c, const struct rlt__net_cond *want)
{
#define SAME(f, dflt)                                                                          \
	do {                                                                                   \
		unsigned long long w_ = want->f ? (unsigned long long)want->f : (dflt);        \
		if ((unsigned long long)c->f != w_)                                            \
			print_message("condition %u: " #f " is %llu, not %llu\n", i,            \
			              (unsigned long long)c->f, w_);                             \
		assert_int_equal(c->f, w_);                                                    \
	} while (0)
	SAME(kind, 0);
	SAME(dir, 0);
	SAME(dur_ns, 0);
	SAME(jitter_ns, 0);
	SAME(dist, 0);
	SAME(loss_ppm, 0);
	SAME(after, 0);
	SAME(after_ns, 0);
	SAME(after_bytes, 0);
	SAME(close_ns, 0);
	SAME(slice_lo, 0);
	SAME(slice_hi, 0);
	SAME(delay_ns, 0);
	SAME(connect, 0);
	SAME(connect_ns, 0);
	SAME(p_ppm, RLT_NET_PPM);
#undef SAME
}

static void kinds(void **st)
{
	(void)st;
	struct rlt__net_set s = parse_ok("latency=50ms jitter=5ms dist=normal; loss=1.5%; "
	                                 "reset after=1MB; hang after=2s close=30s dir=in; "
	                                 "slice=1-100 delay=1ms; connect=timeout after=3s");
	static const struct rlt__net_cond want[] = {
		{.kind = RLT_NET_LATENCY, .dur_ns = 50 * MS, .jitter_ns = 5 * MS, .dist = RLT_NET_NORMAL,
		 .dir = RLT_NET_IN /* latency's default */},
		{.kind = RLT_NET_LOSS, .loss_ppm = 15000, .dir = RLT_NET_BOTH},
		{.kind = RLT_NET_RESET, .after = RLT_NET_AFTER_BYTES, .after_bytes = 1000000, .dir = 0},
		{.kind = RLT_NET_HANG, .after = RLT_NET_AFTER_TIME, .after_ns = 2 * SEC,
		 .close_ns = 30 * SEC, .dir = RLT_NET_IN},
		{.kind = RLT_NET_SLICE, .slice_lo = 1, .slice_hi = 100, .delay_ns = MS, .dir = RLT_NET_BOTH},
		{.kind = RLT_NET_CONNECT, .connect = RLT_NET_TIMEOUT, .connect_ns = 3 * SEC},
	};
	assert_int_equal(s.n, 6);
	for (unsigned i = 0; i < s.n; i++)
		assert_cond(i, &s.c[i], &want[i]);

	s = parse_ok("connect=timeout");
	assert_int_equal(s.c[0].connect_ns, RLT_NET_CONNECT_DEFAULT_NS);
	s = parse_ok("connect=refuse p=25% seed=7");
	assert_int_equal(s.c[0].connect, RLT_NET_REFUSE);
	assert_int_equal(s.c[0].p_ppm, 250000);
	assert_int_equal(s.c[0].has_seed, 1);
	assert_int_equal(s.c[0].seed, 7);
	s = parse_ok("reset");
	assert_int_equal(s.c[0].after, RLT_NET_AFTER_NONE);
	s = parse_ok("reset after=64KiB; slice=4096; hang after=1000");
	assert_int_equal(s.c[0].after_bytes, 65536);
	assert_int_equal(s.c[1].slice_lo, 4096);
	assert_int_equal(s.c[1].slice_hi, 4096);
	assert_int_equal(s.c[2].after_bytes, 1000);
	/* blanks and empty parts are no condition */
	assert_int_equal(parse_ok("").n, 0);
	assert_int_equal(parse_ok(" ; ;").n, 0);
	assert_int_equal(parse_ok(";loss=0%;").n, 1);
	assert_int_equal(parse_ok("loss=100%").c[0].loss_ppm, RLT_NET_PPM);
	assert_int_equal(parse_ok("loss=0.0001%").c[0].loss_ppm, 1);
}

static void matchers(void **st)
{
	(void)st;
	struct rlt__net_set s = parse_ok("loss=5% port!=53; reset peer=10.1.2.3/8 port=5432; "
	                                 "slice=10 family!=unix; hang peer!=::1 family=all");
	assert_int_equal(s.c[0].m.port_lo, 53);
	assert_int_equal(s.c[0].m.port_hi, 53);
	assert_int_equal(s.c[0].m.port_not, 1);
	assert_int_equal(s.c[1].m.peer_af, AF_INET);
	assert_int_equal(s.c[1].m.peer_prefix, 8);
	assert_int_equal(s.c[1].m.peer_addr[0], 10);
	assert_int_equal(s.c[1].m.peer_addr[1], 0); /* masked to the prefix */
	assert_int_equal(s.c[1].m.peer_not, 0);
	assert_int_equal(s.c[2].m.family, RLT_FAMILY_UNIX);
	assert_int_equal(s.c[2].m.family_not, 1);
	assert_int_equal(s.c[3].m.peer_af, AF_INET6);
	assert_int_equal(s.c[3].m.peer_not, 1);
	assert_int_equal(s.c[3].m.family, RLT_FAMILY_ALL);
	s = parse_ok("reset port=8000-8100");
	assert_int_equal(s.c[0].m.port_lo, 8000);
	assert_int_equal(s.c[0].m.port_hi, 8100);
}

static void errors(void **st)
{
	(void)st;
	parse_bad("jitter=5ms", "unknown condition \"jitter\"");
	parse_bad("latency", "latency needs a value");
	parse_bad("latency=", "no value");
	parse_bad("latency=5", "latency: \"5\" is not a duration");
	parse_bad("loss=150%", "\"150%\" is not a share in 0%..100%");
	parse_bad("loss=5", "loss: \"5\" is not a share");
	parse_bad("loss=0.00001%", "is not a share");
	parse_bad("reset=1MB", "reset takes no value");
	parse_bad("reset after=soon", "after: \"soon\" is neither a duration");
	parse_bad("reset dir=in", "dir does not apply to reset");
	parse_bad("connect=refuse dir=out", "dir does not apply to connect");
	parse_bad("connect=refuse after=1s", "after does not apply to connect=refuse");
	parse_bad("connect=drop", "connect: unknown \"drop\"");
	parse_bad("connect=timeout after=1MB", "after: \"1MB\" is not a duration");
	parse_bad("slice=100-1", "slice: \"100-1\" is an inverted range");
	parse_bad("slice=0", "slice: \"0\" is not N or N-M bytes");
	parse_bad("slice=1.5", "slice: \"1.5\"");
	parse_bad("slice=10 close=1s", "close does not apply to slice");
	parse_bad("hang close=0", "close: 0 would close at once");
	parse_bad("latency=5ms dist=normal", "dist applies only with jitter=");
	parse_bad("latency=5ms jitter=1ms dist=pareto", "dist: unknown \"pareto\"");
	parse_bad("loss=1% dir=up", "dir: unknown \"up\"");
	parse_bad("loss=1% p=2", "p: \"2\" is not a share");
	parse_bad("loss=1% seed=x", "seed: \"x\" is not a whole number");
	parse_bad("loss=1% port=0", "port: \"0\" is not a port");
	parse_bad("loss=1% port=90-80", "inverted range");
	parse_bad("loss=1% peer=host", "peer: \"host\" is not an IPv4 or IPv6 address");
	parse_bad("loss=1% peer=1.2.3.4/33", "prefix \"/33\" is not in 0..32");
	parse_bad("loss=1% family=ipx", "family: unknown \"ipx\"");
	parse_bad("loss=1% family!=all", "family!=all would match nothing");
	parse_bad("loss=1% family=unix port=5", "port does not apply to family=unix");
	parse_bad("loss=1% dir!=in", "dir!=: only peer, port and family can be negated");
	parse_bad("loss=1% loss", "\"loss\" is not key=value");
	parse_bad("loss=1% =3", "has no key before");
	parse_bad("loss=1% port=5 port=6", "port is given twice");
	parse_bad("loss=1% colour=red", "unknown key \"colour\"");
	parse_bad("loss=1%; slice=x", "RLT_NET=\"slice=x\"");
	parse_bad("loss=1%\x01", "byte \\x01");
	char many[600] = "";
	for (int i = 0; i < 17; i++)
		strcat(many, "loss=1%;");
	parse_bad(many, "more than 16 conditions");
}

/* Every accepted condition prints to a text that parses back to the same condition. */
static void canonical_round_trip(void **st)
{
	(void)st;
	static const char *const cases[] = {
		"latency=50ms jitter=5ms dist=normal",
		"latency=1.5s",
		"loss=0.25% dir=out p=50% seed=42",
		"reset after=1MB port=5432",
		"reset after=250ms peer=192.168.0.0/16",
		"hang after=10KiB close=30s dir=in",
		"hang",
		"slice=1-100 delay=2ms",
		"slice=7 family=all",
		"connect=refuse peer!=::1 port!=53",
		"connect=timeout after=3s family!=unix",
		"connect=timeout",
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct rlt__net_set a = parse_ok(cases[i]), b;
		char text[600];
		struct rlt_error e;
		int n = rlt__net_format(&a.c[0], text, sizeof text);
		assert_true(n > 0 && (size_t)n < sizeof text);
		assert_int_equal(rlt__net_format(&a.c[0], NULL, 0), n);
		if (rlt__net_parse(text, &b, &e) != 0)
			fail_msg("%s -> %s: %s", cases[i], text, e.msg);
		/* the same condition but for the text as written */
		memcpy(b.c[0].text, a.c[0].text, sizeof a.c[0].text);
		if (memcmp(&a.c[0], &b.c[0], sizeof a.c[0]) != 0)
			fail_msg("%s -> %s reads back differently", cases[i], text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kinds),
		cmocka_unit_test(matchers),
		cmocka_unit_test(errors),
		cmocka_unit_test(canonical_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
