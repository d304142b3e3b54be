/* test_charge_quick.c: the charge's short way (issue 21: one rule, a token bucket of this
 * process, a call that conforms now: charge_quick.h rlt__charge_quick and engine_gcra.h
 * rlt__token_take_now) leaves the ticket, the state and the counters exactly as the engine's
 * whole decision does, to the ns; the call after the last one that fits waits exactly as long
 * as it must (the edge where the short way hands over to the long one); threads charging one
 * rule never take more than the burst and the rate give. A fake clock throughout: every time is
 * passed in (rlt__charge_at). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "charge.h"
#include "engine.h"
#include "engine_gcra.h"
#include "policy.h"
#include "testutil.h"
#include "ruleset_harness.h" /* last: its global rs would shadow the core headers' parameters */

#define NS_S 1000000000ull
#define T0 (1000 * NS_S) /* the fake clock's start: far from 0, as CLOCK_MONOTONIC is */

static void load(const char *send)
{
	rs_build((const char *[RLT_VAR_COUNT]){NULL, NULL, send, NULL, NULL}, 1);
}

static const struct rlt__rule_ver *ver0(void)
{
	return rlt__ver(&rs.rules[RLT_VAR_SEND][0]);
}

/* load, and the send rule's params */
static const struct rlt_params *load_params(const char *send)
{
	load(send);
	return &ver0()->params;
}

static uint64_t tat0(void)
{
	return atomic_load((_Atomic uint64_t *)ver0()->state);
}

/* The leaf against the engine's whole decision, on the same states: it takes exactly when the
 * decision is "go now", the same TAT, and nothing otherwise. */
static void take_now_is_the_decisions_go(void **s)
{
	static const char *rates[] = {"1000B/s burst=1000", "3KiB/s burst=5000", "100GiB/s",
	                              "7msg/s burst=3", "1MiB/s burst=64KiB max-wait=1s"};
	uint64_t seed = 21;
	(void)s;
	for (unsigned k = 0; k < sizeof rates / sizeof rates[0]; k++) {
		const struct rlt_params *p = load_params(rates[k]);
		_Atomic uint64_t a = 0, b = 0;
		rlt_ns_t now = T0;
		for (int i = 0; i < 20000; i++) {
			now += rlt_test_range(&seed, 0, 3 * NS_S / 1000);
			uint64_t cost = rlt_test_range(&seed, 1, p->burst + p->burst / 4);
			uint64_t before = atomic_load(&b);
			rlt_ns_t at;
			enum rlt_verdict v = rlt__token_decide(p, (void *)&a, now, cost,
			                                       RLT_MODE_RESERVE, &at);
			int took = rlt__token_take_now(p, (void *)&b, now, cost);
			assert_int_equal(took, v == RLT_GO);
			if (took) {
				assert_int_equal(at, now);
				assert_int_equal(atomic_load(&a), atomic_load(&b));
			} else {
				/* nothing taken; the state then goes the long way, as the charge's */
				assert_int_equal(atomic_load(&b), before);
				atomic_store(&b, atomic_load(&a));
			}
		}
	}
}

/* The send rule's counters: calls, allowed, delayed, their total delay, and units. */
static void assert_send_stats(uint64_t calls, uint64_t allowed, uint64_t delayed, uint64_t delay_ns,
                              uint64_t units)
{
	const struct rlt__stats *st = rs.rules[RLT_VAR_SEND][0].st;

	assert_int_equal(st->calls, calls);
	assert_int_equal(st->allowed, allowed);
	assert_int_equal(st->delayed, delayed);
	assert_int_equal(st->delay_ns_total, delay_ns);
	assert_int_equal(st->units, units);
}

/* A run of sends through rlt__charge_at (one rule: the short way whenever the call conforms)
 * against the engine's decisions on a state of its own: every ticket's go time, the TAT after
 * it and the counters, to the ns. */
static void short_way_is_the_engines_decision(void **s)
{
	static const char *rates[] = {"1000B/s burst=1000", "3KiB/s burst=5000",
	                              "100GiB/s burst=100", "1MiB/s burst=64KiB"};
	uint64_t seed = 2121;
	(void)s;
	for (unsigned k = 0; k < sizeof rates / sizeof rates[0]; k++) {
		const struct rlt_params *p = load_params(rates[k]);
		_Atomic uint64_t ref = 0;
		uint64_t n = 0, waited = 0, units = 0, wait_ns = 0;
		rlt_ns_t now = T0;
		for (int i = 0; i < 20000; i++) {
			struct rlt__ticket t;
			rlt_ns_t at;
			now += rlt_test_range(&seed, 0, 2 * NS_S / 1000);
			uint64_t cost = rlt_test_range(&seed, 1, p->burst / 3 + 1);
			enum rlt_verdict v = rlt_decide(p, (void *)&ref, now, cost, RLT_MODE_RESERVE, &at);
			assert_int_not_equal(v, RLT_DENY);
			assert_int_equal(rlt__charge_at(&rs, &t, RLT_VAR_SEND, 0x1, NULL, NULL, cost, 1,
			                                now), 0);
			assert_int_equal(t.start, now);
			assert_int_equal(t.go, v == RLT_GO ? now : at);
			assert_int_equal(t.rule[0].at, at);
			assert_int_equal(t.counted, v == RLT_GO);
			assert_int_equal(tat0(), atomic_load(&ref));
			rlt__settle(&rs, &t, cost, 1);
			n++;
			units += cost;
			if (v != RLT_GO) {
				waited++;
				wait_ns += at - now;
				now = at; /* the caller slept until its slot */
			}
		}
		assert_send_stats(n, n, waited, wait_ns, units);
	}
}

/* 1000 B/s, burst 1000: a byte every ms. The burst goes at once; the next byte a ns before its
 * slot waits for exactly that slot, and one asked at its slot goes at once, the short way. */
/* Charges BYTES (one message) to the send rule at NOW: accepted, to go at WANT_GO, counted by
 * the charge itself (the short way) when COUNTED; then SENT bytes of it are settled. */
static void send_one(struct rlt__ticket *t, uint64_t bytes, rlt_ns_t now, rlt_ns_t want_go,
                     int counted, uint64_t sent)
{
	assert_int_equal(rlt__charge_at(&rs, t, RLT_VAR_SEND, 0x1, NULL, NULL, bytes, 1, now), 0);
	assert_int_equal(t->go, want_go);
	assert_int_equal(t->counted, counted);
	rlt__settle(&rs, t, sent, 1);
}

static void the_edge_to_the_ns(void **s)
{
	struct rlt__ticket t;
	struct rlt__stats *st;
	(void)s;
	load("1000B/s burst=1000");
	st = rs.rules[RLT_VAR_SEND][0].st;
	send_one(&t, 1000, T0, T0, 1, 1000);
	/* the bucket is empty: the next byte's slot is T0 + 1 ms */
	send_one(&t, 1, T0 + 999999, T0 + 1000000, 0, 1);
	assert_int_equal(st->delayed, 1);
	assert_int_equal(st->delay_ns_total, 1);
	/* the byte after: its slot is T0 + 2 ms; a ns early waits that ns */
	send_one(&t, 1, T0 + 1999999, T0 + 2000000, 0, 1);
	/* at its slot exactly: at once, counted whole by the charge */
	send_one(&t, 1, T0 + 3000000, T0 + 3000000, 1, 1);
	assert_send_stats(4, 4, 2, 2, 1003);
	/* a short send given back: the short way's ticket settles as the long way's */
	send_one(&t, 10, T0 + 30000000, T0 + 30000000, 1, 4);
	assert_int_equal(st->units, 1007);
	assert_int_equal(rlt__available(&rs, RLT_VAR_SEND, 0x1, NULL, T0 + 30000000), 23);
}

/* Threads charging one reject rule, their clock readings taken from one fake clock that each
 * call moves on: what was let through never exceeds the burst plus the rate over the span of
 * the readings, and the counters add up to every call. The short way's CAS races the long
 * way's (a denied call) and itself. */
#define THREADS 4
#define CALLS 200000
static _Atomic uint64_t fake_clock;
static _Atomic uint64_t took_units, took_calls, denied_calls;

static void *charger(void *arg)
{
	uint64_t seed = (uintptr_t)arg;
	for (int i = 0; i < CALLS; i++) {
		struct rlt__ticket t;
		rlt_ns_t now = T0 + atomic_fetch_add(&fake_clock, rlt_test_range(&seed, 0, 400));
		uint64_t cost = rlt_test_range(&seed, 1, 60);
		if (rlt__charge_at(&rs, &t, RLT_VAR_SEND, 0x1, NULL, NULL, cost, 1, now) == 0) {
			rlt__settle(&rs, &t, cost, 1);
			atomic_fetch_add(&took_units, cost);
			atomic_fetch_add(&took_calls, 1);
		} else {
			atomic_fetch_add(&denied_calls, 1);
		}
	}
	return NULL;
}

static void threads_never_exceed_the_budget(void **s)
{
	pthread_t th[THREADS];
	(void)s;
	/* 10 MB/s: 10 bytes per us, and 4 x 200000 calls of 30 bytes on average, 200 ns apart on
	 * average: about three times what the rate gives */
	load("10MB/s burst=4000 action=reject errno=EAGAIN");
	atomic_store(&fake_clock, 0);
	atomic_store(&took_units, 0);
	atomic_store(&took_calls, 0);
	atomic_store(&denied_calls, 0);
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, charger, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	uint64_t span = atomic_load(&fake_clock); /* every reading lies in [T0, T0 + span] */
	uint64_t most = 4000 + span / 100;       /* 10 bytes per 1000 ns */
	uint64_t took = atomic_load(&took_units);
	assert_true(took <= most);
	assert_true(took >= 4000);              /* the burst, at least, went */
	assert_true(atomic_load(&denied_calls) > 0); /* the rule did bind */
	struct rlt__stats *st = rs.rules[RLT_VAR_SEND][0].st;
	assert_int_equal(st->calls, (uint64_t)THREADS * CALLS);
	assert_int_equal(st->allowed, atomic_load(&took_calls));
	assert_int_equal(st->rejected, atomic_load(&denied_calls));
	assert_int_equal(st->units, took);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_now_is_the_decisions_go),
		cmocka_unit_test(short_way_is_the_engines_decision),
		cmocka_unit_test(the_edge_to_the_ns),
		cmocka_unit_test(threads_never_exceed_the_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
