/* test_conns.c: rlt__conns_try, the RLT_CONNS decision in steps (the hooks wait between them):
 * all or none over the rules of a mask, a reject
 * rule refuses at once, a delay rule answers "wait" with the full rule and its max-wait deadline
 * and refuses once the max-wait is over, and the statistics count each call once. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"

#include "conns.h"
#include "testutil.h"
#include "policy.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

static void load(const char *conns)
{
	rs_build((const char *[RLT_VAR_COUNT]){NULL, NULL, NULL, NULL, conns}, 1);
}

static uint32_t open_of(unsigned i)
{
	return atomic_load(&rs.rules[RLT_VAR_CONNS][i].open);
}

static const struct rlt__stats *st(unsigned i)
{
	return rs.rules[RLT_VAR_CONNS][i].st;
}

static void reject_rule_refuses_at_once(void **s)
{
	struct rlt__conns_wait w = {0};
	(void)s;
	load("1");
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 1000), 0);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 1000), -ECONNREFUSED);
	assert_int_equal(w.waiting, 0);
	assert_int_equal(open_of(0), 1);
	assert_int_equal(st(0)->calls, 2);
	assert_int_equal(st(0)->allowed, 1);
	assert_int_equal(st(0)->rejected, 1);
	assert_int_equal(st(0)->units, 1);
	rlt__conns_release(&rs, 1);
	assert_int_equal(open_of(0), 0);
}

static void delay_rule_waits_then_expires(void **s)
{
	struct rlt__conns_wait w = {0};
	const rlt_ns_t ms = 1000000;
	(void)s;
	load("1 action=delay max-wait=50ms");
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 1 * ms), 0);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 10 * ms), 1);
	assert_int_equal(w.rule, 0);
	assert_int_equal(w.deadline, 60 * ms);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 40 * ms), 1); /* the deadline stays */
	assert_int_equal(w.deadline, 60 * ms);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 60 * ms), -ECONNREFUSED);
	assert_int_equal(st(0)->rejected, 1);
	assert_int_equal(st(0)->delayed, 0);
	assert_int_equal(w.waiting, 0); /* zeroed for the next call */
}

static void delay_rule_counts_the_wait(void **s)
{
	struct rlt__conns_wait w = {0};
	const rlt_ns_t ms = 1000000;
	(void)s;
	load("1 action=delay");
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 1 * ms), 0);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 10 * ms), 1);
	assert_int_equal(w.deadline, RLT_NS_NEVER); /* no max-wait: until a close */
	rlt__conns_release(&rs, 1);
	assert_int_equal(rlt__conns_try(&rs, 1, &w, 35 * ms), 0);
	assert_int_equal(st(0)->calls, 2);
	assert_int_equal(st(0)->allowed, 2);
	assert_int_equal(st(0)->delayed, 1);
	assert_int_equal(st(0)->delay_ns_total, 25 * ms);
	assert_int_equal(st(0)->delay_ns_max, 25 * ms);
}

static void all_or_none(void **s)
{
	struct rlt__conns_wait w = {0};
	(void)s;
	load("5 ; 1 action=delay");
	assert_int_equal(rlt__conns_try(&rs, 3, &w, 1000), 0);
	assert_int_equal(open_of(0), 1);
	assert_int_equal(rlt__conns_try(&rs, 3, &w, 2000), 1);
	assert_int_equal(w.rule, 1);
	assert_int_equal(open_of(0), 1); /* the slot of rule 0 given back while it waits */
	assert_int_equal(st(0)->calls, 1); /* not counted until decided */
	struct rlt__conns_wait other = {0};
	assert_int_equal(rlt__conns_try(&rs, 1, &other, 3000), 0); /* a call under rule 0 alone */
	assert_int_equal(open_of(0), 2);
}

static struct rlt__peer peer_of(const char *ip)
{
	struct rlt__peer p = {.af = AF_INET};
	inet_pton(AF_INET, ip, p.addr);
	return p;
}

struct acq {
	struct rlt__peer peer;
	int rc, err;
	rlt_ns_t done;
};

static void *acquire_thread(void *arg)
{
	struct acq *a = arg;
	a->rc = rlt__conns_acquire_peer(&rs, 1, &a->peer, &a->err);
	a->done = rlt__now();
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* key=peer action=delay: a call over its key's limit sleeps until that key's count drops (the
 * release wakes it), another key's call goes at once; with a max-wait it fails after it. */
static void keyed_delay_waits_for_its_key(void **s)
{
	struct rlt__peer x = peer_of("10.0.0.1"), y = peer_of("10.0.0.2");
	struct acq a = {.peer = x};
	pthread_t th;
	int err = 0;
	(void)s;
	load("1 key=peer action=delay");
	assert_int_equal(rlt__conns_acquire_peer(&rs, 1, &x, &err), 0);
	assert_int_equal(pthread_create(&th, NULL, acquire_thread, &a), 0);
	sleep_ms(100);
	assert_int_equal(a.done, 0);                                  /* still waiting */
	assert_int_equal(rlt__conns_acquire_peer(&rs, 1, &y, &err), 0); /* y's own count */
	rlt_ns_t released = rlt__now();
	rlt__conns_release_peer(&rs, 1, &x);
	pthread_join(th, NULL);
	assert_int_equal(a.rc, 0);
	assert_true(a.done - released < 100 * 1000000ull); /* woken, not polled */
	assert_int_equal(st(0)->delayed, 1);

	load("1 key=peer action=delay max-wait=100ms");
	assert_int_equal(rlt__conns_acquire_peer(&rs, 1, &x, &err), 0);
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(rlt__conns_acquire_peer(&rs, 1, &x, &err), -1);
	assert_int_equal(err, ECONNREFUSED);
	assert_true(rlt__now() - t0 >= 100 * 1000000ull);
	assert_true(rlt__now() - t0 < 1000 * 1000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reject_rule_refuses_at_once),
		cmocka_unit_test(delay_rule_waits_then_expires),
		cmocka_unit_test(delay_rule_counts_the_wait),
		cmocka_unit_test(all_or_none),
		cmocka_unit_test(keyed_delay_waits_for_its_key),
	};
	return cmocka_run_group_tests_name("conns", tests, NULL, NULL);
}
