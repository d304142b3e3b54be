/* test_charge.c: a call against several rules at once, refunds, RLT_CONNS, and what a charge
 * counts in the stats JSON (the writer itself: test_stats.c).
 * These use the real clock (charge reads it), with rules slow enough that timing cannot flip
 * an outcome: a decision either conforms at once or is seconds away. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "clock.h"
#include "policy.h"
#include "stats.h"
#include "wait.h"

static struct rlt__ruleset rs;

static void load(const char *send, const char *conns)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, send, NULL, conns};
	struct rlt_error err;
	memset(&rs, 0, sizeof rs);
	rs.stats_on = 1;
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
}

static void rejection_gives_everything_back(void **s)
{
	struct rlt__ticket t;
	(void)s;
	/* rule 0 (delay, 1000 B burst) would grant; rule 1 (reject, 2 msgs) rejects the third */
	load("1000B/h burst=1000; 2msg/h burst=2 action=reject errno=EPERM", NULL);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 100, 1), 0);
	assert_int_equal(t.go, t.start);
	rlt__settle(&rs, &t, 100, 1);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 100, 1), 0);
	rlt__settle(&rs, &t, 100, 1);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 100, 1), -1);
	assert_int_equal(t.err, EPERM);
	/* rule 0 got its 100 back: 800 are left */
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 800);
	struct rlt__stats *a = rs.rules[RLT_VAR_SEND][0].st, *b = rs.rules[RLT_VAR_SEND][1].st;
	assert_int_equal(a->allowed, 2);
	assert_int_equal(a->units, 200);
	assert_int_equal(b->rejected, 1);
	assert_int_equal(b->units, 2);
}

static void settle_refunds_what_was_not_used(void **s)
{
	struct rlt__ticket t;
	(void)s;
	load("1000B/h burst=1000", NULL);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	rlt__settle(&rs, &t, 150, 1); /* a short write */
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 850);
	assert_int_equal(rs.rules[RLT_VAR_SEND][0].st->units, 150);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	rlt__settle(&rs, &t, 0, 0); /* EAGAIN */
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 850);
}

static void the_latest_slot_wins_and_max_wait(void **s)
{
	struct rlt__ticket t;
	(void)s;
	load("10B/s burst=10; 100B/s burst=100 max-wait=500ms", NULL);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 10, 1), 0);
	rlt__settle(&rs, &t, 10, 1);
	/* rule 0 now needs 1 s for 10 more bytes: the call goes when the slower rule allows */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 10, 1), 0);
	assert_true(t.go - t.start >= 999000000ull && t.go - t.start <= 1000000000ull);
	rlt__settle(&rs, &t, 0, 0);
	/* 200 bytes: rule 1 would have to wait past its max-wait */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x2, NULL, 200, 1), -1);
	assert_int_equal(t.err, ENOBUFS);
}

static void connection_states(void **s)
{
	struct rlt__ticket t;
	(void)s;
	load("100B/h burst=100 scope=connection", NULL);
	void *a = aligned_alloc(64, rs.conn_block_size), *b = aligned_alloc(64, rs.conn_block_size);
	rlt__conn_block_init(&rs, a);
	rlt__conn_block_init(&rs, b);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, a, 100, 1), 0);
	rlt__settle(&rs, &t, 100, 1);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, a, rlt__now()), 0);
	/* the other socket has its own budget */
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, b, rlt__now()), 100);
	/* a socket with no block (no memory) is not held by connection rules */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 100, 1), 0);
	free(a);
	free(b);
}

static void conns_reject(void **s)
{
	int err = 0;
	(void)s;
	load(NULL, "2 errno=EMFILE");
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), -1);
	assert_int_equal(err, EMFILE);
	rlt__conns_release(&rs, 0x1);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(rs.rules[RLT_VAR_CONNS][0].st->rejected, 1);
}

static void *release_later(void *arg)
{
	(void)arg;
	rlt__sleep_until(rlt__now() + 200000000ull);
	rlt__conns_release(&rs, 0x1);
	return NULL;
}

static void conns_delay_waits_for_a_close(void **s)
{
	int err = 0;
	pthread_t th;
	(void)s;
	load(NULL, "1 action=delay; 1 action=delay max-wait=100ms");
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	pthread_create(&th, NULL, release_later, NULL);
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	rlt_ns_t waited = rlt__now() - t0;
	pthread_join(th, NULL);
	assert_true(waited >= 150000000ull && waited < 5000000000ull);
	/* with max-wait: gives up after about 100 ms */
	assert_int_equal(rlt__conns_acquire(&rs, 0x2, &err), 0);
	t0 = rlt__now();
	assert_int_equal(rlt__conns_acquire(&rs, 0x2, &err), -1);
	waited = rlt__now() - t0;
	assert_int_equal(err, ECONNREFUSED);
	assert_true(waited >= 100000000ull && waited < 5000000000ull);
}

static void stats_json(void **s)
{
	struct rlt__ticket t;
	char path[] = "/tmp/rlt-stats-XXXXXX", buf[4096];
	(void)s;
	load("1000B/h burst=1000; 5msg/h", NULL);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 123, 1), 0);
	rlt__settle(&rs, &t, 123, 1);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(rlt__stats_write(&rs, write, fd, 42, 7), 0);
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
	unlink(path);
	assert_non_null(strstr(buf, "{\"pid\":42,\"elapsed_ns\":7,\"rules\":["));
	assert_non_null(strstr(buf, "{\"variable\":\"RLT_SEND\",\"rule\":\"1000B/h burst=1000\","
	                            "\"calls\":1,\"allowed\":1,\"delayed\":0,\"rejected\":0,"
	                            "\"units\":123,\"delay_ns_total\":0,\"delay_ns_max\":0}"));
	assert_non_null(strstr(buf, "\"rule\":\"5msg/h\",\"calls\":1,\"allowed\":1,\"delayed\":0,"
	                            "\"rejected\":0,\"units\":1,"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rejection_gives_everything_back),
		cmocka_unit_test(settle_refunds_what_was_not_used),
		cmocka_unit_test(the_latest_slot_wins_and_max_wait),
		cmocka_unit_test(connection_states),
		cmocka_unit_test(conns_reject),
		cmocka_unit_test(conns_delay_waits_for_a_close),
		cmocka_unit_test(stats_json),
	};
	return cmocka_run_group_tests_name("charge", tests, NULL, NULL);
}
