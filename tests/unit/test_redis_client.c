/* test_redis_client.c: src/redis_client.c without a server: the reply parser's bounds against
 * byte strings (a huge multi-bulk header, a huge bulk, nesting, garbage, every partial reply),
 * and a round trip over a socketpair (bytes after the reply, a reply longer than the buffer, a
 * peer that never answers or hangs up), each bounded by its deadline. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "clock.h"
#include "redis_client.h"

static char why[200];

static int parse(const char *b, size_t n, struct rlt__resp_reply *r, size_t *used)
{
	*used = 0;
	why[0] = '\0';
	return rlt__resp_parse(b, n, r, used, why, sizeof why);
}

static int parse_str(const char *b, struct rlt__resp_reply *r, size_t *used)
{
	return parse(b, strlen(b), r, used);
}

/* What the scripts answer: {granted, wait_us, valid_us, ref}. */
static const char answer[] = "*4\r\n:10\r\n:0\r\n:-1\r\n$7\r\n12:3456\r\n";

static void whole_replies(void **s)
{
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	assert_int_equal(parse_str("+OK\r\n", &r, &used), 1);
	assert_int_equal(used, 5);
	assert_int_equal(r.top.type, '+');
	assert_string_equal(r.top.str, "OK");

	assert_int_equal(parse_str("-NOSCRIPT No matching script\r\n", &r, &used), 1);
	assert_int_equal(r.top.type, '-');
	assert_string_equal(r.top.str, "NOSCRIPT No matching script");

	assert_int_equal(parse_str(":-42\r\n", &r, &used), 1);
	assert_int_equal(r.top.integer, -42);

	assert_int_equal(parse_str("$-1\r\n", &r, &used), 1);
	assert_true(r.top.nil);

	assert_int_equal(parse_str("*-1\r\n", &r, &used), 1);
	assert_int_equal(r.top.type, '*');
	assert_true(r.top.nil);
	assert_int_equal(r.elements, 0);

	assert_int_equal(parse_str(answer, &r, &used), 1);
	assert_int_equal(used, sizeof answer - 1);
	assert_int_equal(r.elements, 4);
	assert_int_equal(r.el[0].integer, 10);
	assert_int_equal(r.el[1].integer, 0);
	assert_int_equal(r.el[2].integer, -1);
	assert_int_equal(r.el[3].type, '$');
	assert_string_equal(r.el[3].str, "12:3456");
	assert_int_equal(r.el[3].len, 7);

	/* a bulk may hold CRLF itself: its length, not a line, says where it ends */
	assert_int_equal(parse_str("$4\r\na\r\nb\r\n", &r, &used), 1);
	assert_int_equal(used, 10);
	assert_int_equal(r.top.len, 4);
	assert_string_equal(r.top.str, "a??b");

	/* what follows a whole reply is left to the caller (used says where it starts) */
	assert_int_equal(parse_str("+OK\r\n+MORE\r\n", &r, &used), 1);
	assert_int_equal(used, 5);
}

/* A length after KIND ('*' elements, '$' bytes): 2^31 - 1 is refused and the message names it,
 * a negative one and MAX + 1 are refused before anything after is read, and MAX itself is fine
 * and waits for what it announces (AT_MAX follows the header then, not all of it). */
static void length_bounds(char kind, int max, const char *at_max)
{
	struct rlt__resp_reply r;
	size_t used;
	char b[64];

	snprintf(b, sizeof b, "%c2147483647\r\n", kind);
	assert_int_equal(parse_str(b, &r, &used), -1);
	assert_non_null(strstr(why, "2147483647"));
	snprintf(b, sizeof b, "%c-2\r\n", kind);
	assert_int_equal(parse_str(b, &r, &used), -1);
	snprintf(b, sizeof b, "%c%d\r\n", kind, max + 1);
	assert_int_equal(parse_str(b, &r, &used), -1);
	snprintf(b, sizeof b, "%c%d\r\n%s", kind, max, at_max);
	assert_int_equal(parse_str(b, &r, &used), 0);
}

static void huge_multi_bulk_header(void **s)
{
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	length_bounds('*', RLT__RESP_ELEMS_MAX, ":1\r\n");
	assert_int_equal(parse_str("*99999999999999999999999\r\n", &r, &used), -1);
}

static void huge_bulk(void **s)
{
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	length_bounds('$', RLT__RESP_REPLY_MAX, "abc");
	assert_int_equal(parse_str("*4\r\n:1\r\n$2147483647\r\n", &r, &used), -1);
}

static void nesting(void **s)
{
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	assert_int_equal(parse_str("*1\r\n*1\r\n:1\r\n", &r, &used), -1);
	assert_non_null(strstr(why, "array inside an array"));
	/* refused at the inner header, whatever depth follows */
	assert_int_equal(parse_str("*2\r\n:1\r\n*1\r\n*1\r\n*1\r\n", &r, &used), -1);
	assert_int_equal(parse_str("*1\r\n*2147483647\r\n", &r, &used), -1);
}

static void garbage(void **s)
{
	static const char *const bad[] = {
		"hello\r\n",                     /* not RESP */
		"\r\n",                          /* an empty line */
		"\x01\xff\r\n",                  /* binary */
		":12a\r\n",                      /* a bad integer */
		":\r\n",                         /* no digits */
		":-\r\n",                        /* a sign alone */
		":1234567890123456789\r\n",      /* 19 digits: could overflow */
		"$3\r\nabcd\r\n",                /* a bulk without its CRLF */
		"$x\r\n",                        /* a bad length */
		"*x\r\n",                        /* a bad count */
		"*\r\n",                         /* no count */
		"*2\r\n:1\r\nzz\r\n",            /* garbage inside an array */
		"*1\r\n\r\n",                    /* an empty element */
	};
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = parse_str(bad[i], &r, &used);
		if (rc != -1)
			fail_msg("\"%s\" (%zu): %d, not refused", bad[i], i, rc);
		/* the reason may reach a log line: printable, bounded */
		for (const char *p = why; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
	}
	/* a long status is cut to what is kept, printable, its whole length told */
	char b[400];
	memset(b, 'a', sizeof b);
	b[0] = '+';
	b[10] = '\x1b';
	memcpy(b + sizeof b - 2, "\r\n", 2);
	assert_int_equal(parse(b, sizeof b, &r, &used), 1);
	assert_int_equal(r.top.len, sizeof b - 3);
	assert_int_equal(strlen(r.top.str), RLT__RESP_STR_MAX);
	assert_int_equal(r.top.str[9], '?');
}

static void partial_replies(void **s)
{
	static const char *const whole[] = {answer, "+OK\r\n", ":12\r\n", "$5\r\nhello\r\n",
	                                    "$-1\r\n", "*0\r\n", "-ERR no\r\n"};
	struct rlt__resp_reply r;
	size_t used;
	(void)s;

	for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
		size_t n = strlen(whole[i]);
		for (size_t k = 0; k < n; k++)
			if (parse(whole[i], k, &r, &used) != 0)
				fail_msg("\"%s\" cut at %zu: not \"more needed\" (%s)", whole[i], k, why);
		assert_int_equal(parse(whole[i], n, &r, &used), 1);
		assert_int_equal(used, n);
	}
}

/* ----- round trips over a socketpair: fds[0] is ours, fds[1] the "server" ----- */

static int fds[2];

static int pair_up(void **s)
{
	(void)s;
	return socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
}

static int pair_down(void **s)
{
	(void)s;
	close(fds[0]);
	close(fds[1]);
	return 0;
}

static int trip(const char *reply, size_t n, rlt_ns_t bound_ns, struct rlt__resp_reply *rep)
{
	const char *argv[2] = {"ECHO", "hi"};

	if (n)
		assert_int_equal(write(fds[1], reply, n), (ssize_t)n);
	why[0] = '\0';
	return rlt__redis_roundtrip(fds[0], 2, argv, rlt__now() + bound_ns, rep, why, sizeof why);
}

static void roundtrip_whole(void **s)
{
	static const char req[] = "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n";
	struct rlt__resp_reply rep;
	char got[64];
	(void)s;

	assert_int_equal(trip(answer, sizeof answer - 1, 50000000, &rep), 0);
	assert_int_equal(rep.elements, 4);
	assert_int_equal(read(fds[1], got, sizeof got), (ssize_t)(sizeof req - 1));
	assert_memory_equal(got, req, sizeof req - 1);
}

static void roundtrip_bytes_after(void **s)
{
	struct rlt__resp_reply rep;
	(void)s;

	assert_int_equal(trip("+OK\r\n+OK\r\n", 10, 50000000, &rep), -1);
	assert_non_null(strstr(why, "more bytes than one reply"));
}

static void roundtrip_too_long(void **s)
{
	static char big[RLT__RESP_REPLY_MAX + 100];
	struct rlt__resp_reply rep;
	(void)s;

	memset(big, 'a', sizeof big);
	big[0] = '+'; /* a status line that never ends */
	assert_int_equal(trip(big, sizeof big, 1000000000, &rep), -1);
	assert_non_null(strstr(why, "longer than"));
}

static void roundtrip_silent(void **s)
{
	struct rlt__resp_reply rep;
	rlt_ns_t t0 = rlt__now(), took;
	(void)s;

	/* half a reply, then nothing: the deadline ends it */
	assert_int_equal(trip("*4\r\n:1\r\n", 8, 30000000, &rep), -1);
	took = rlt__now() - t0;
	assert_non_null(strstr(why, "in time"));
	assert_true(took >= 30000000);
	assert_true(took < 1000000000); /* generous: a loaded machine */
}

static void roundtrip_hangup(void **s)
{
	struct rlt__resp_reply rep;
	(void)s;

	assert_int_equal(write(fds[1], "+O", 2), 2);
	shutdown(fds[1], SHUT_WR);
	assert_int_equal(trip(NULL, 0, 1000000000, &rep), -1);
	assert_non_null(strstr(why, "closed"));
}

static void send_bounds(void **s)
{
	const char *argv[13];
	(void)s;

	for (int i = 0; i < 13; i++)
		argv[i] = "x";
	assert_int_equal(rlt__redis_send(fds[0], 13, argv, rlt__now() + 50000000, why, sizeof why),
	                 -1);
	/* a past deadline sends nothing */
	assert_int_equal(rlt__redis_send(fds[0], 1, argv, rlt__now() - 1, why, sizeof why), -1);
	assert_non_null(strstr(why, "in time"));
}

static void auth_without_password(void **s)
{
	(void)s;
	/* no password: no request at all (a closed fd would fail one) */
	assert_int_equal(rlt__redis_auth(-1, "user", "", rlt__now() + 1000000, why, sizeof why), 0);
	assert_int_equal(rlt__redis_auth(-1, NULL, NULL, rlt__now() + 1000000, why, sizeof why), 0);
}

static void auth_refused(void **s)
{
	static const char err[] = "-WRONGPASS invalid username-password pair\r\n";
	char got[128];
	(void)s;

	assert_int_equal(write(fds[1], err, sizeof err - 1), (ssize_t)(sizeof err - 1));
	assert_int_equal(rlt__redis_auth(fds[0], NULL, "s3cret", rlt__now() + 50000000, why,
	                                 sizeof why),
	                 -1);
	assert_non_null(strstr(why, "WRONGPASS"));
	assert_null(strstr(why, "s3cret"));
	/* the default user: AUTH <pass> alone */
	ssize_t n = read(fds[1], got, sizeof got - 1);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, "*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n");
}

/* a test with a socket pair for the client and the fake server (pair_up, pair_down) */
#define PAIRED(f) cmocka_unit_test_setup_teardown(f, pair_up, pair_down)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_replies),
		cmocka_unit_test(huge_multi_bulk_header),
		cmocka_unit_test(huge_bulk),
		cmocka_unit_test(nesting),
		cmocka_unit_test(garbage),
		cmocka_unit_test(partial_replies),
		PAIRED(roundtrip_whole),
		PAIRED(roundtrip_bytes_after),
		PAIRED(roundtrip_too_long),
		PAIRED(roundtrip_silent),
		PAIRED(roundtrip_hangup),
		PAIRED(send_bounds),
		cmocka_unit_test(auth_without_password),
		PAIRED(auth_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
