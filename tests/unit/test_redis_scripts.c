/* test_redis_scripts.c: the Lua scripts (src/redis_scripts.c) and the C engines they mirror
 * admit the same calls. One seeded sequence of (time, cost) goes through a C engine and through
 * its script on a redis-server this test starts (loopback, its own port, killed by pid), each
 * call a lease of exactly its cost, and every answer is compared. The script's clock is the
 * only change made to it here: Redis' TIME becomes a key the test sets before each call, so
 * that both sides see the same microsecond. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "clock.h"
#include "hiredis_dl.h"
#include "redis_client.h"
#include "redis_scripts.h"
#include "redis_server.h"

#define SEC 1000000000ull
#define STEPS 300

static pid_t server;
static struct rlt__redis_conn conn;
static char why[200];
static char now_key[64];

static int group_setup(void **s)
{
	struct rlt_error err;
	int port = rlt_test_free_port();
	(void)s;

	if (rlt__hiredis_load(&err) != 0)
		return -1;
	server = rlt_test_redis_start(port);
	if (server <= 0)
		return -1;
	snprintf(now_key, sizeof now_key, "rlthrottle-test:now:%d", (int)getpid());
	return rlt__redis_open(&conn, "127.0.0.1", (uint16_t)port, 1000000, why, sizeof why);
}

static int group_teardown(void **s)
{
	(void)s;
	rlt__redis_close(&conn);
	rlt_test_redis_stop(server);
	return 0;
}

static void call(int argc, const char *const *argv, struct rlt__resp_reply *rep)
{
	if (rlt__redis_roundtrip(conn.fd, argc, argv, rlt__now() + 2 * SEC, rep, why, sizeof why))
		fail_msg("%s: %s", argv[0], why);
	if (rep->top.type == '-')
		fail_msg("%s: %s", argv[0], rep->top.str);
}

/* The family's script with Redis' clock replaced by the test's, loaded: its SHA1 in sha. */
static void load(enum rlt__redis_family fam, char sha[48])
{
	static const char clock_call[] = "redis.call('TIME')";
	const char *text = rlt__redis_script[fam], *at = strstr(text, clock_call);
	char with[200], *script;
	struct rlt__resp_reply rep;

	assert_non_null(at);
	assert_null(strstr(at + 1, clock_call));
	snprintf(with, sizeof with, "{0, redis.call('GET', '%s')}", now_key);
	script = malloc(strlen(text) + strlen(with) + 1);
	assert_non_null(script);
	sprintf(script, "%.*s%s%s", (int)(at - text), text, with, at + strlen(clock_call));
	const char *argv[3] = {"SCRIPT", "LOAD", script};
	call(3, argv, &rep);
	free(script);
	assert_int_equal(rep.top.type, '$');
	assert_true(rep.top.len < 48);
	memcpy(sha, rep.top.str, rep.top.len + 1);
}

/* One script call at now_us: {granted, wait_us}. */
static void script_call(const char *sha, const char *key, uint64_t now_us, uint64_t cost,
                        int reserve, int64_t maxw_us, char args[RLT__REDIS_NARGS][40], int nargs,
                        int64_t *granted, int64_t *wait_us)
{
	char a_now[24], a_cost[24], a_maxw[24];
	const char *argv[12];
	struct rlt__resp_reply rep;
	int argc = 0;

	snprintf(a_now, sizeof a_now, "%llu", (unsigned long long)now_us);
	const char *set[3] = {"SET", now_key, a_now};
	call(3, set, &rep);
	snprintf(a_cost, sizeof a_cost, "%llu", (unsigned long long)cost);
	snprintf(a_maxw, sizeof a_maxw, "%lld", (long long)maxw_us);
	argv[argc++] = "EVALSHA";
	argv[argc++] = sha;
	argv[argc++] = "1";
	argv[argc++] = key;
	argv[argc++] = a_cost; /* want: a lease of exactly the call */
	argv[argc++] = a_cost; /* min */
	argv[argc++] = reserve ? "1" : "0";
	argv[argc++] = a_maxw;
	argv[argc++] = "-";
	for (int i = 0; i < nargs; i++)
		argv[argc++] = args[i];
	call(argc, argv, &rep);
	assert_int_equal(rep.top.type, '*');
	assert_int_equal(rep.elements, 4);
	*granted = rep.el[0].integer;
	*wait_us = rep.el[1].integer;
}

/*
 * The same seeded sequence through the engine and the script. Times are whole microseconds
 * (the scripts' unit), so the two see the same instant. In RLT_MODE_NOW a call must be
 * admitted by both or by neither; in RLT_MODE_RESERVE (reserve set) the go times must also
 * agree, to the microsecond the script rounds up to.
 */
static void agree(enum rlt_algo algo, uint64_t amount, uint64_t period_ns, uint64_t burst,
                  int reserve, uint64_t max_wait_ns, uint64_t step_us, uint64_t max_cost,
                  uint64_t seed)
{
	struct rlt_params p;
	struct rlt_error err;
	enum rlt__redis_family fam;
	char args[RLT__REDIS_NARGS][40], sha[48], key[96];
	uint64_t t_us = 1000ull * 1000 * 1000; /* 1000 s: far from 0, whole windows apart */
	int nargs, admitted = 0, waited = 0, denied = 0;
	void *state;

	assert_int_equal(rlt_params_init(&p, algo, amount, 1, period_ns, burst, max_wait_ns, &err),
	                 0);
	state = aligned_alloc(64, (rlt_state_size(&p) + 63) / 64 * 64);
	assert_non_null(state);
	assert_int_equal(rlt_state_init(&p, state, 0), 0);
	nargs = rlt__redis_script_args(&p, &fam, args);
	load(fam, sha);
	snprintf(key, sizeof key, "rlthrottle:{test-%d-%d-%d-%llu}:%s", (int)getpid(), (int)algo,
	         reserve, (unsigned long long)seed, rlt__redis_family_name[fam]);

	for (int i = 0; i < STEPS; i++) {
		uint64_t cost = rlt_test_range(&seed, 1, max_cost);
		rlt_ns_t now = t_us * 1000, at;
		enum rlt_verdict v = rlt_decide(&p, state, now, cost,
		                                reserve ? RLT_MODE_RESERVE : RLT_MODE_NOW, &at);
		int64_t granted, wait_us;

		script_call(sha, key, t_us, cost, reserve,
		            max_wait_ns == RLT_NS_NEVER ? -1 : (int64_t)(max_wait_ns / 1000), args,
		            nargs, &granted, &wait_us);
		if ((v != RLT_DENY) != (granted > 0))
			fail_msg("%s step %d (t %llu us, cost %llu): engine %s, script %s",
			         rlt__redis_family_name[fam], i, (unsigned long long)t_us,
			         (unsigned long long)cost, v == RLT_DENY ? "denies" : "admits",
			         granted > 0 ? "admits" : "denies");
		if (granted > 0) {
			uint64_t go_us = t_us + (uint64_t)wait_us;
			/* the engine's go time in us, rounded up as the script rounds its wait */
			uint64_t eng_us = (at + 999) / 1000;
			assert_int_equal(granted, cost);
			if (eng_us < t_us)
				eng_us = t_us;
			if (eng_us != go_us)
				fail_msg("%s step %d (t %llu us, cost %llu): go at +%llu us (engine), "
				         "+%lld us (script)",
				         rlt__redis_family_name[fam], i, (unsigned long long)t_us,
				         (unsigned long long)cost, (unsigned long long)(eng_us - t_us),
				         (long long)wait_us);
			admitted++;
			waited += wait_us > 0;
		} else {
			denied++;
		}
		t_us += rlt_test_range(&seed, 0, step_us);
	}
	/* the sequence must exercise more than one answer, or it proves little */
	assert_true(admitted > STEPS / 10);
	assert_true(denied + waited > STEPS / 10);
	rlt_state_destroy(&p, state);
	free(state);
}

/* 1000/s, burst 5: T = 1000 us; calls arrive a little faster than the rate on average. */
static void token_now(void **s)
{
	(void)s;
	agree(RLT_ALGO_TOKEN, 1000, SEC, 5, 0, RLT_NS_NEVER, 1500, 3, 1);
}

static void token_reserve(void **s)
{
	(void)s;
	agree(RLT_ALGO_TOKEN, 1000, SEC, 5, 1, 4 * 1000 * 1000, 1500, 3, 2);
}

static void leaky_now(void **s)
{
	(void)s;
	agree(RLT_ALGO_LEAKY, 1000, SEC, 5, 0, RLT_NS_NEVER, 1500, 3, 3);
}

static void leaky_reserve(void **s)
{
	(void)s;
	agree(RLT_ALGO_LEAKY, 1000, SEC, 5, 1, 4 * 1000 * 1000, 1500, 3, 4);
}

/* 20 per 100 ms: windows of 100,000 us, sub-windows of 10,000 us. */
static void fixed_now(void **s)
{
	(void)s;
	agree(RLT_ALGO_FIXED_WINDOW, 20, SEC / 10, 0, 0, RLT_NS_NEVER, 12000, 3, 5);
}

/* Costs of 1 only: with mixed costs the two differ (see sliding_reserve's note). */
static void fixed_reserve(void **s)
{
	(void)s;
	agree(RLT_ALGO_FIXED_WINDOW, 20, SEC / 10, 0, 1, 150 * 1000 * 1000, 6000, 1, 6);
}

static void sliding_now(void **s)
{
	(void)s;
	agree(RLT_ALGO_SLIDING_WINDOW, 20, SEC / 10, 0, 0, RLT_NS_NEVER, 12000, 3, 7);
}

/*
 * Not compared: reservations under the sliding window, nor under the fixed window with mixed
 * costs. The engines serve reservers in order (fixed: one position word; sliding: no call goes
 * before the latest admission, last_at), the scripts take the earliest room there is, so a
 * later call can go before an earlier reservation: e.g. sliding, 20 per 100 ms, seed 8, step
 * 16: the engine says +16512 us, the script +6512 us; fixed, costs 1..3, seed 6, step 21:
 * +70006 us against +0 us. A drift left for issue 10 (this split changes no behaviour).
 */

static void log_now(void **s)
{
	(void)s;
	agree(RLT_ALGO_SLIDING_LOG, 20, SEC / 10, 0, 0, RLT_NS_NEVER, 12000, 3, 9);
}

static void log_reserve(void **s)
{
	(void)s;
	agree(RLT_ALGO_SLIDING_LOG, 20, SEC / 10, 0, 1, 150 * 1000 * 1000, 12000, 3, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(token_now),   cmocka_unit_test(token_reserve),
		cmocka_unit_test(leaky_now),   cmocka_unit_test(leaky_reserve),
		cmocka_unit_test(fixed_now),   cmocka_unit_test(fixed_reserve),
		cmocka_unit_test(sliding_now), cmocka_unit_test(log_now),
		cmocka_unit_test(log_reserve),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
