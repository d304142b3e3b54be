/* test_ruleset_fork.c: src/ruleset_fork.c: the supervisor's budgets of a forked process
 * (rlthrottle(7) BEHAVIOUR: "the child has its own budgets, starting where the parent's stood"). Every
 * algorithm's process-scope budget in the fork starts where the parent's stood and is its own
 * from then on; a shared scope stays one budget; the fork's statistics start at zero and, on
 * join, add into the parent's (the maximum delay as a maximum). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "charge.h"
#include "ruleset_fork.h"
#include "testutil.h"
#include "clock.h"
#include "keytab.h"
#include "policy.h"
#include "scope_shm.h"

static struct rlt__ruleset rs;
static char shm_name[64];

/* One send rule of every algorithm, in order, plus a shared one: mask bit i is rule i. */
enum { TOKEN, LEAKY, FIXED, SLIDING, LOG, SHARED, NRULES };

static int setup(void **s)
{
	char send[512];
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, send, NULL, "5"};
	struct rlt_error err;
	(void)s;
	snprintf(shm_name, sizeof shm_name, "ut-fork-%d", (int)getpid());
	snprintf(send, sizeof send,
	         "1000B/h burst=1000; 1000B/h burst=1000 algo=leaky; 1000B/h algo=fixed-window; "
	         "1000B/h algo=sliding-window; 1000msg/h algo=sliding-log; "
	         "1000B/h burst=1000 scope=shared:%s",
	         shm_name);
	memset(&rs, 0, sizeof rs);
	rs.stats_on = 1;
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
	assert_int_equal(rs.n[RLT_VAR_SEND], NRULES);
	return 0;
}

static int teardown(void **s)
{
	struct rlt_error err;
	(void)s;
	rlt__shm_remove(shm_name, &err);
	return 0;
}

/* Spends `bytes` (and one message) under rule `i` alone, now, and settles it whole. */
static void spend(struct rlt__ruleset *r, int i, uint64_t bytes)
{
	struct rlt__ticket t;
	assert_int_equal(rlt__charge(r, &t, RLT_VAR_SEND, 1u << i, NULL, bytes, 1), 0);
	assert_true(t.go - t.start < RLT_NS_PER_SEC); /* the budgets are far from empty */
	rlt__settle(r, &t, bytes, 1);
}

/* What rule i's own state has left now (the engine's count: units of bytes or messages). */
static uint64_t left(struct rlt__ruleset *r, int i)
{
	struct rlt__rt_rule *rule = &r->rules[RLT_VAR_SEND][i];
	return rlt_available(&rule->rule.params, rule->v0.state, rlt__now());
}

/* The units a spend of `bytes` takes from rule i (the log counts messages: one a call). */
static uint64_t units(int i, uint64_t bytes)
{
	return i == LOG ? 1 : bytes;
}

/* A leaky bucket's available says only whether anything is ahead; where it stands is when a
 * call would go: asked without taking anything (MODE_NOW), while something is ahead. */
static rlt_ns_t due(struct rlt__ruleset *r, int i, rlt_ns_t now)
{
	struct rlt__rt_rule *rule = &r->rules[RLT_VAR_SEND][i];
	rlt_ns_t at = 0;
	assert_int_equal(rlt_decide(&rule->rule.params, rule->v0.state, now, 1, RLT_MODE_NOW, &at),
	                 RLT_DENY);
	return at;
}

static void starts_where_the_parent_stood(void **s)
{
	(void)s;
	/* the parent spends a different amount under each rule */
	for (int i = 0; i < NRULES; i++)
		spend(&rs, i, 100 + 10 * (uint64_t)i);
	uint64_t before[NRULES];
	for (int i = 0; i < NRULES; i++)
		before[i] = left(&rs, i);

	struct rlt__ruleset *f = rlt__ruleset_fork(&rs);
	assert_non_null(f);
	for (int i = 0; i < NRULES; i++) {
		if (i == LEAKY)
			continue;
		/* a budget an hour long does not move in the time the test takes: to the unit */
		assert_int_equal(left(f, i), before[i]);
		assert_int_equal(left(f, i), 1000 - units(i, 100 + 10 * (uint64_t)i));
	}
	rlt_ns_t now = rlt__now();
	assert_int_equal(due(f, LEAKY, now), due(&rs, LEAKY, now));
	assert_true(due(f, LEAKY, now) > now);
	rlt__ruleset_join(&rs, f);
}

static void a_budget_of_its_own(void **s)
{
	(void)s;
	struct rlt__ruleset *f = rlt__ruleset_fork(&rs);
	assert_non_null(f);
	for (int i = 0; i < NRULES; i++) {
		uint64_t p0 = left(&rs, i), f0 = left(f, i);
		assert_int_equal(p0, 1000);
		assert_int_equal(f0, 1000);
		/* what the fork spends, the parent still has */
		spend(f, i, 200);
		if (i == SHARED) {
			/* ... except a shared scope: one budget for every process */
			assert_int_equal(left(&rs, i), p0 - 200);
			assert_int_equal(left(f, i), f0 - 200);
			continue;
		}
		if (i == LEAKY) {
			assert_int_equal(left(f, i), 0);
			assert_int_equal(left(&rs, i), 1000);
			spend(&rs, i, 300);
			rlt_ns_t now = rlt__now(), fdue = due(f, i, now);
			/* 300 ahead in the parent, 200 in the fork */
			assert_true(due(&rs, i, now) > fdue);
			assert_true(fdue > now);
			continue;
		}
		assert_int_equal(left(f, i), f0 - units(i, 200));
		assert_int_equal(left(&rs, i), p0);
		/* and the other way round */
		spend(&rs, i, 300);
		assert_int_equal(left(&rs, i), p0 - units(i, 300));
		assert_int_equal(left(f, i), f0 - units(i, 200));
	}
	/* the process-scope states are new memory, the shared one is the same */
	for (int i = 0; i < NRULES; i++) {
		if (i == SHARED)
			assert_ptr_equal(f->rules[RLT_VAR_SEND][i].v0.state, rs.rules[RLT_VAR_SEND][i].v0.state);
		else
			assert_ptr_not_equal(f->rules[RLT_VAR_SEND][i].v0.state,
			                     rs.rules[RLT_VAR_SEND][i].v0.state);
	}
	rlt__ruleset_join(&rs, f);
}

/* Two forks of one parent: neither spends the other's budget. */
static void forks_of_one_parent(void **s)
{
	(void)s;
	struct rlt__ruleset *a = rlt__ruleset_fork(&rs), *b = rlt__ruleset_fork(&rs);
	assert_non_null(a);
	assert_non_null(b);
	uint64_t b0 = left(b, TOKEN), l0 = left(b, LOG);
	spend(a, TOKEN, 500);
	spend(a, LOG, 1);
	assert_int_equal(left(b, TOKEN), b0);
	assert_int_equal(left(b, LOG), l0);
	/* a fork of a fork stands where its parent stood */
	struct rlt__ruleset *c = rlt__ruleset_fork(a);
	assert_non_null(c);
	assert_int_equal(left(c, TOKEN), left(a, TOKEN));
	rlt__ruleset_join(a, c);
	rlt__ruleset_join(&rs, a);
	rlt__ruleset_join(&rs, b);
}

#define ST(r, v, i, f) atomic_load(&(r)->rules[v][i].st->f)

static void statistics_start_at_zero_and_join(void **s)
{
	(void)s;
	spend(&rs, TOKEN, 100);
	spend(&rs, TOKEN, 100);
	atomic_store(&rs.rules[RLT_VAR_SEND][TOKEN].st->delayed, 4);
	atomic_store(&rs.rules[RLT_VAR_SEND][TOKEN].st->rejected, 5);
	atomic_store(&rs.rules[RLT_VAR_SEND][TOKEN].st->delay_ns_total, 1000);
	atomic_store(&rs.rules[RLT_VAR_SEND][TOKEN].st->delay_ns_max, 700);
	atomic_store(&rs.rules[RLT_VAR_CONNS][0].st->calls, 9);

	struct rlt__ruleset *f = rlt__ruleset_fork(&rs);
	assert_non_null(f);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < f->n[v]; i++) {
			assert_int_equal(ST(f, v, i, calls), 0);
			assert_int_equal(ST(f, v, i, allowed), 0);
			assert_int_equal(ST(f, v, i, delayed), 0);
			assert_int_equal(ST(f, v, i, rejected), 0);
			assert_int_equal(ST(f, v, i, units), 0);
			assert_int_equal(ST(f, v, i, delay_ns_total), 0);
			assert_int_equal(ST(f, v, i, delay_ns_max), 0);
		}
	/* the parent's are untouched */
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, calls), 2);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, units), 200);

	spend(f, TOKEN, 50);
	spend(f, LOG, 1);
	atomic_store(&f->rules[RLT_VAR_SEND][TOKEN].st->delayed, 1);
	atomic_store(&f->rules[RLT_VAR_SEND][TOKEN].st->rejected, 2);
	atomic_store(&f->rules[RLT_VAR_SEND][TOKEN].st->delay_ns_total, 30);
	atomic_store(&f->rules[RLT_VAR_SEND][TOKEN].st->delay_ns_max, 20);
	atomic_store(&f->rules[RLT_VAR_SEND][LEAKY].st->delay_ns_max, 900);
	atomic_store(&f->rules[RLT_VAR_CONNS][0].st->calls, 3);
	rlt__ruleset_join(&rs, f);

	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, calls), 3);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, allowed), 3);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, units), 250);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, delayed), 5);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, rejected), 7);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, delay_ns_total), 1030);
	/* a maximum, not a sum: the parent's 700 stays over the fork's 20, the fork's 900 wins */
	assert_int_equal(ST(&rs, RLT_VAR_SEND, TOKEN, delay_ns_max), 700);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, LEAKY, delay_ns_max), 900);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, LOG, calls), 1);
	assert_int_equal(ST(&rs, RLT_VAR_SEND, LOG, units), 1);
	assert_int_equal(ST(&rs, RLT_VAR_CONNS, 0, calls), 12);
	/* the parent's budgets are not the fork's: joining gives nothing back nor takes */
	assert_int_equal(left(&rs, TOKEN), 800);
}

/* The process's mapped size in kB (the states are mapped, not allocated: the leak check of
 * the sanitizers does not see them). */
static long vm_size_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	fclose(f);
	assert_true(kb > 0);
	return kb;
}

/* ASan keeps freed memory in a quarantine (256 MB by default), which a fork's copy of the
 * ruleset (some 150 kB, freed at join) fills over 2000 rounds: VmSize then grows with no leak.
 * Without it, what the check measures is what join gives back. */
#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void)
{
	return "quarantine_size_mb=0";
}
#endif

/* Forking and joining many times does not leak: join unmaps the fork's states (five mapped
 * states, 24 kB or more a round: 2000 rounds would leak some 48 MB). */
static void many_forks(void **s)
{
	(void)s;
	long before = vm_size_kb();
	for (int k = 0; k < 2000; k++) {
		struct rlt__ruleset *f = rlt__ruleset_fork(&rs);
		assert_non_null(f);
		if (k % 100 == 0)
			spend(f, SLIDING, 1);
		rlt__ruleset_join(&rs, f);
	}
	assert_int_equal(ST(&rs, RLT_VAR_SEND, SLIDING, units), 20);
	assert_true(vm_size_kb() - before < 8 * 1024);
}

/* key= (RLT_SEND keyed, under --seccomp): a fork's keys and their budgets start where the
 * parent's stood and are its own from then on; join unmaps its table (a 290 KiB table a
 * round: 300 rounds would leak some 85 MB). */
static void keys_of_its_own(void **s)
{
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "1000B/h burst=1000 key=peer", NULL, NULL};
	struct rlt__peer a = {.af = AF_INET, .addr = {127, 0, 0, 2}, .port = 80};
	struct rlt__ruleset krs;
	struct rlt__ticket t;
	struct rlt_error err;
	(void)s;
	memset(&krs, 0, sizeof krs);
	krs.stats_on = 1;
	if (rlt__ruleset_build(&krs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
	assert_int_equal(rlt__charge_peer(&krs, &t, RLT_VAR_SEND, 1, NULL, &a, 600, 1), 0);
	rlt__settle(&krs, &t, 600, 1);
	struct rlt__ruleset *f = rlt__ruleset_fork(&krs);
	assert_non_null(f);
	assert_ptr_not_equal(f->rules[RLT_VAR_SEND][0].keytab, krs.rules[RLT_VAR_SEND][0].keytab);
	assert_in_range(rlt__available_peer(f, RLT_VAR_SEND, 1, NULL, &a, rlt__now()), 400, 401);
	assert_int_equal(rlt__charge_peer(f, &t, RLT_VAR_SEND, 1, NULL, &a, 400, 1), 0);
	rlt__settle(f, &t, 400, 1);
	assert_in_range(rlt__available_peer(f, RLT_VAR_SEND, 1, NULL, &a, rlt__now()), 0, 1);
	assert_in_range(rlt__available_peer(&krs, RLT_VAR_SEND, 1, NULL, &a, rlt__now()), 400, 401);
	assert_int_equal(atomic_load(&f->rules[RLT_VAR_SEND][0].keytab->a->tracked), 1);
	rlt__ruleset_join(&krs, f);
	long before = vm_size_kb();
	for (int k = 0; k < 300; k++)
		rlt__ruleset_join(&krs, rlt__ruleset_fork(&krs));
	assert_true(vm_size_kb() - before < 8 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(starts_where_the_parent_stood, setup, teardown),
		cmocka_unit_test_setup_teardown(a_budget_of_its_own, setup, teardown),
		cmocka_unit_test_setup_teardown(forks_of_one_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(statistics_start_at_zero_and_join, setup, teardown),
		cmocka_unit_test_setup_teardown(many_forks, setup, teardown),
		cmocka_unit_test(keys_of_its_own),
	};
	return cmocka_run_group_tests_name("ruleset_fork", tests, NULL, NULL);
}
