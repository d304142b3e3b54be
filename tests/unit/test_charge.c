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

#include "charge.h"
#include "conns.h"
#include "keytab_key.h"
#include "testutil.h"
#include "clock.h"
#include "keytab.h"
#include "pacing.h"
#include "policy.h"
#include "stats.h"
#include "wait.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

#define NS_S 1000000000ull

static void load(const char *send, const char *conns)
{
	rs_build((const char *[RLT_VAR_COUNT]){NULL, NULL, send, NULL, conns}, 1);
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

/* A charge that goes at once is counted whole by the charge, units included, so that a call
 * that then moves all of it has nothing left to settle (issue 21: a conforming call costs a
 * clock read and an atomic update per rule); a short call takes back what it did not move, and
 * a charge that waits counts its units when settled, as before. */
static void conforming_charge_counts_whole(void **s)
{
	struct rlt__ticket t;
	struct rlt__stats *st;
	(void)s;
	load("1000B/h burst=1000", NULL);
	st = rs.rules[RLT_VAR_SEND][0].st;
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 100, 1), 0);
	assert_int_equal(t.go, t.start);
	assert_int_equal(st->units, 100); /* before the settle */
	assert_int_equal(st->allowed, 1);
	rlt__settle(&rs, &t, 100, 1);
	assert_int_equal(st->units, 100);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 900);
	/* a short write: 150 of 600 */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	rlt__settle(&rs, &t, 150, 1);
	assert_int_equal(st->units, 250);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 750);
	/* 1000 more must wait: counted when settled */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 1000, 1), 0);
	assert_true(t.go > t.start);
	assert_int_equal(st->units, 250);
	rlt__settle(&rs, &t, 1000, 1);
	assert_int_equal(st->units, 1250);
	assert_int_equal(st->allowed, 3);
	assert_int_equal(st->delayed, 1);

	/* statistics off: nothing counted, the budget the same */
	load("1000B/h burst=1000", NULL);
	rs.stats_on = 0;
	st = rs.rules[RLT_VAR_SEND][0].st;
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	rlt__settle(&rs, &t, 600, 1);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 300, 1), 0);
	rlt__settle(&rs, &t, 100, 1);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 300);
	assert_int_equal(st->units, 0);
	assert_int_equal(st->calls, 0);

	/* a calls rule (connect) takes 1 even for a charge of 0 messages, which a settle of 0
	 * gives back */
	rs_build((const char *[RLT_VAR_COUNT]){"10/h burst=1", NULL, NULL, NULL, NULL}, 1);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_CONNECT, 0x1, NULL, 0, 0), 0);
	rlt__settle(&rs, &t, 0, 0);
	assert_int_equal(rs.rules[RLT_VAR_CONNECT][0].st->units, 0);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_CONNECT, 0x1, NULL, 0, 1), 0);
	assert_int_equal(t.go, t.start); /* the one call of the burst was given back */
	rlt__settle(&rs, &t, 0, 1);
	assert_int_equal(rs.rules[RLT_VAR_CONNECT][0].st->units, 1);
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

static struct rlt__peer peer4(uint8_t last)
{
	struct rlt__peer p = {.af = AF_INET, .addr = {127, 0, 0, last}, .port = 80};
	return p;
}

/* key=peer: a budget per client, and the rejection of another rule gives a key's charge back
 * to that key; a settle refunds the key charged. */
static void keyed_charge(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL,
	                                "2/h burst=2 key=peer action=reject; 5/h burst=5 action=reject",
	                                NULL, NULL, NULL};
	struct rlt__peer a = peer4(2), b = peer4(3), c = peer4(4), d = peer4(5);
	struct rlt__ticket t;
	struct rlt__key kc;
	(void)s;
	rs_build(v, 1);
	struct rlt__keytab *kt = rs.rules[RLT_VAR_ACCEPT][0].keytab;
	assert_non_null(kt);
	assert_null(rs.rules[RLT_VAR_ACCEPT][0].v0.state);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &a, 0, 1), 0);
		rlt__settle(&rs, &t, 0, 1);
	}
	assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &a, 0, 1), -1);
	/* a's third took nothing from the 5/h rule: b has its own two */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &b, 0, 1), 0);
		rlt__settle(&rs, &t, 0, 1);
	}
	assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &c, 0, 1), 0);
	rlt__settle(&rs, &t, 0, 1);
	/* the 5/h rule is spent: c's second is refused there, and its key gets the charge back */
	assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &c, 0, 1), -1);
	rlt__key_of(RLT_KEY_PEER, 32, 128, &c, 0, &kc);
	assert_int_equal(rlt__keytab_available(kt, kt->p, &kc, rlt__now()), 1);
	assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x3, NULL, &d, 0, 1), -1);
	/* a settle that used nothing gives the key its unit back */
	assert_int_equal(rlt__charge_wait_peer(&rs, &t, RLT_VAR_ACCEPT, 0x1, NULL, &c, 0, 1), 0);
	assert_int_equal(rlt__keytab_available(kt, kt->p, &kc, rlt__now()), 0);
	rlt__settle(&rs, &t, 0, 0);
	assert_int_equal(rlt__keytab_available(kt, kt->p, &kc, rlt__now()), 1);
	assert_int_equal(atomic_load(&kt->a->tracked), 4);
	/* the charge without a peer: calls with no address known share one key */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_ACCEPT, 0x1, NULL, 0, 1), 0);
	assert_int_equal(atomic_load(&kt->a->tracked), 5);
}

/* key=peer on a send: a key's budget is its own in what a piece may take (rlt__available_peer,
 * rlt__pace_piece), in the charge and in the settle; a call with no address has a key of its
 * own. 1000 B/h refills a byte in 3.6 s: a figure may gain one byte while the test runs. */
static void keyed_send_available(void **s)
{
	struct rlt__peer a = peer4(2), b = peer4(3);
	struct rlt__ticket t;
	struct rlt__pace p;
	(void)s;
	load("1000B/h burst=3000 key=peer", NULL);
	assert_non_null(rs.rules[RLT_VAR_SEND][0].keytab);
	assert_int_equal(rlt__available_peer(&rs, RLT_VAR_SEND, 0x1, NULL, &a, rlt__now()), 3000);
	assert_int_equal(rlt__charge_peer(&rs, &t, RLT_VAR_SEND, 0x1, NULL, &a, 2500, 1), 0);
	assert_int_equal(t.go, t.start);
	rlt__settle(&rs, &t, 2000, 1); /* a short send: 500 go back to a */
	assert_in_range(rlt__available_peer(&rs, RLT_VAR_SEND, 0x1, NULL, &a, rlt__now()), 1000,
	                1001);
	assert_int_equal(rlt__available_peer(&rs, RLT_VAR_SEND, 0x1, NULL, &b, rlt__now()), 3000);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()), 3000);
	/* a non-blocking send in pieces sends what its key's budget allows (a piece is 256) */
	rlt__pace_begin(&p, &rs, RLT_VAR_SEND, 0x1, 2500, RLT_PACE_NONBLOCK);
	p.peer = &a;
	assert_in_range(rlt__pace_piece(&p, &rs, NULL, rlt__now()), 1000, 1001);
	p.peer = &b;
	assert_int_equal(rlt__pace_piece(&p, &rs, NULL, rlt__now()), 2500);
	/* the same through the blocking charge a stream send makes: b's full budget, a's waits */
	assert_int_equal(rlt__charge_wait_at(&rs, &t, RLT_VAR_SEND, 0x1, NULL, &b, 3000, 1,
	                                     rlt__now()), 0);
	assert_int_equal(t.go, t.start);
	rlt__settle(&rs, &t, 3000, 1);
	assert_int_equal(rlt__charge_peer(&rs, &t, RLT_VAR_SEND, 0x1, NULL, &a, 2000, 1), 0);
	assert_true(t.go > t.start + 3000 * NS_S);
	rlt__settle(&rs, &t, 0, 0);
	/* key=port: the remote port makes the key */
	load("1000B/h burst=3000 key=port", NULL);
	struct rlt__peer a81 = a;
	a81.port = 81;
	assert_int_equal(rlt__charge_peer(&rs, &t, RLT_VAR_SEND, 0x1, NULL, &a, 3000, 1), 0);
	rlt__settle(&rs, &t, 3000, 1);
	assert_in_range(rlt__available_peer(&rs, RLT_VAR_SEND, 0x1, NULL, &b, rlt__now()), 0, 1);
	assert_int_equal(rlt__available_peer(&rs, RLT_VAR_SEND, 0x1, NULL, &a81, rlt__now()), 3000);
}

/* action=dry-run: never waits nor fails; counts what delay would have waited (each call its
 * part of the budget's lag) and what reject would have refused; never cuts a send. */
static void dry_run_counts(void **s)
{
	struct rlt__ticket t;
	(void)s;
	load("1000B/h burst=1000 action=dry-run", NULL);
	struct rlt__stats *st = rs.rules[RLT_VAR_SEND][0].st;
	assert_true(rlt__whole(&rs, RLT_VAR_SEND, 0x1, 0) == UINT64_MAX);
	assert_true(rlt__piece(&rs, RLT_VAR_SEND, 0x1) == UINT64_MAX);
	assert_true(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, rlt__now()) == UINT64_MAX);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	assert_int_equal(t.go, t.start);
	rlt__settle(&rs, &t, 600, 1);
	assert_int_equal(st->would_delay, 0);
	/* 600 more: 200 over the burst, 720 s at 1000 B/h; reject would have refused it */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 600, 1), 0);
	assert_int_equal(t.go, t.start);
	rlt__settle(&rs, &t, 600, 1);
	assert_int_equal(st->would_delay, 1);
	assert_int_equal(st->would_reject, 1);
	assert_in_range(st->would_delay_ns_total, 719 * NS_S, 720 * NS_S);
	assert_in_range(st->would_delay_ns_max, 719 * NS_S, 720 * NS_S);
	/* 100 more: the lag grows by 360 s, counted once, not 1080 */
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x1, NULL, 100, 1), 0);
	rlt__settle(&rs, &t, 100, 1);
	assert_in_range(st->would_delay_ns_total, 1079 * NS_S, 1080 * NS_S);
	/* rlthrottle(7) STATISTICS: never in the fields of what happened */
	assert_int_equal(st->delayed, 0);
	assert_int_equal(st->rejected, 0);
	assert_int_equal(st->delay_ns_total, 0);
	assert_int_equal(st->delay_ns_max, 0);
	assert_int_equal(st->allowed, 3);
	assert_int_equal(st->calls, 3);
	assert_int_equal(st->units, 1300);
	/* beside a delay rule, it does not make the call wait, nor count as waiting */
	load("1000B/h burst=1000 action=dry-run; 1000B/h burst=2000", NULL);
	assert_int_equal(rlt__charge(&rs, &t, RLT_VAR_SEND, 0x3, NULL, 1500, 1), 0);
	assert_int_equal(t.go, t.start);
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
	assert_non_null(strstr(buf, "{\"schema\":2,\"pid\":42,\"elapsed_ns\":7,\"rules\":["));
	assert_non_null(strstr(buf, "{\"variable\":\"RLT_SEND\",\"index\":1,\"rule\":\"1000B/h burst=1000\","
	                            "\"calls\":1,\"allowed\":1,\"delayed\":0,\"rejected\":0,"
	                            "\"units\":123,\"delay_ns_total\":0,\"delay_ns_max\":0,"
	                            "\"would_delay\":0,\"would_delay_ns_total\":0,"
	                            "\"would_delay_ns_max\":0,\"would_reject\":0}"));
	assert_non_null(strstr(buf, "\"rule\":\"5msg/h\",\"calls\":1,\"allowed\":1,\"delayed\":0,"
	                            "\"rejected\":0,\"units\":1,"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rejection_gives_everything_back),
		cmocka_unit_test(settle_refunds_what_was_not_used),
		cmocka_unit_test(conforming_charge_counts_whole),
		cmocka_unit_test(the_latest_slot_wins_and_max_wait),
		cmocka_unit_test(connection_states),
		cmocka_unit_test(conns_reject),
		cmocka_unit_test(conns_delay_waits_for_a_close),
		cmocka_unit_test(keyed_charge),
		cmocka_unit_test(keyed_send_available),
		cmocka_unit_test(dry_run_counts),
		cmocka_unit_test(stats_json),
	};
	return cmocka_run_group_tests_name("charge", tests, NULL, NULL);
}
