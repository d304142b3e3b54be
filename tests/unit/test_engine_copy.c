/* rlt_state_copy: a forked process's budget. For every algorithm, a copy made in the middle of a
 * random run stands exactly where the original stood (both then decide the same, to the ns),
 * and is independent of it (what one spends, the other still has). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "rlthrottle.h"

#define SEC RLT_NS_PER_SEC

static const char *const algos[] = {"token", "leaky", "fixed-window", "sliding-window",
                                    "sliding-log"};

struct st {
	struct rlt_params p;
	void *mem;
};

static void *new_mem(const struct rlt_params *p)
{
	size_t size = (rlt_state_size(p) + 63) / 64 * 64;
	void *m = aligned_alloc(64, size);
	assert_non_null(m);
	memset(m, 0xa5, size); /* copy must not rely on zeroed memory */
	return m;
}

static void free_state(const struct rlt_params *p, void *m)
{
	rlt_state_destroy(p, m);
	free(m);
}

static struct rlt_rule parse_rule(const char *text)
{
	struct rlt_rule r;
	struct rlt_error err;
	size_t n;
	assert_int_equal(rlt_rules_parse(RLT_VAR_CONNECT, text, &r, 1, &n, &err), 0);
	return r;
}

/* One step of a seeded run: time moves on by up to 400 ms, cost 1..3, either mode. */
struct step {
	rlt_ns_t dt;
	uint64_t cost;
	enum rlt_mode mode;
};

static struct step next_step(uint64_t *seed)
{
	struct step s;
	s.dt = rlt_test_range(seed, 0, 400) * 1000000ull;
	s.cost = rlt_test_range(seed, 1, 3);
	s.mode = rlt_test_range(seed, 0, 1) ? RLT_MODE_RESERVE : RLT_MODE_NOW;
	return s;
}

static void copy_stands_where_src_stood(void **state)
{
	(void)state;
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		char text[80];
		uint64_t seed = 0x5eed0000 + a;
		rlt_ns_t now = 5 * SEC;

		snprintf(text, sizeof text, "120/min burst=5 algo=%s max-wait=2s", algos[a]);
		if (strstr(algos[a], "window") || strstr(algos[a], "log"))
			snprintf(text, sizeof text, "120/min algo=%s max-wait=2s", algos[a]);
		struct rlt_rule r = parse_rule(text);
		const struct rlt_params *p = &r.params;
		void *src = new_mem(p), *cp = new_mem(p), *spent = new_mem(p);
		assert_int_equal(rlt_state_init(p, src, 0), 0);

		/* a history on the original */
		for (int i = 0; i < 500; i++) {
			struct step s = next_step(&seed);
			rlt_ns_t at;
			now += s.dt;
			rlt_decide(p, src, now, s.cost, s.mode, &at);
		}
		assert_int_equal(rlt_state_copy(p, cp, src), 0);
		assert_int_equal(rlt_state_copy(p, spent, src), 0);

		/* one copy spends everything it may now: neither other state sees it */
		rlt_ns_t at;
		unsigned spent_calls = 0;
		while (spent_calls < 1000 && rlt_decide(p, spent, now, 1, RLT_MODE_NOW, &at) == RLT_GO)
			spent_calls++;
		assert_true(rlt_decide(p, spent, now, 1, RLT_MODE_NOW, &at) != RLT_GO);

		/* the original and the other copy decide the same from here on, to the ns */
		unsigned went = 0;
		for (int i = 0; i < 2000; i++) {
			struct step s = next_step(&seed);
			rlt_ns_t at_src = 0, at_cp = 0;
			now += s.dt / 4;
			enum rlt_verdict vs = rlt_decide(p, src, now, s.cost, s.mode, &at_src);
			enum rlt_verdict vc = rlt_decide(p, cp, now, s.cost, s.mode, &at_cp);
			assert_int_equal(vs, vc);
			if (vs != RLT_DENY)
				assert_true(at_src == at_cp);
			went += vs != RLT_DENY;
		}
		assert_true(went > 100); /* the run admitted something: the comparison meant something */
		free_state(p, spent);
		free_state(p, cp);
		free_state(p, src);
	}
}

/* The copy of a fresh state is fresh, and the copy of an exhausted one is exhausted. */
static void copy_of_fresh_and_of_exhausted(void **state)
{
	(void)state;
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		char text[80];
		rlt_ns_t at, now = 3 * SEC;

		snprintf(text, sizeof text, "10/min algo=%s", algos[a]);
		struct rlt_rule r = parse_rule(text);
		const struct rlt_params *p = &r.params;
		void *src = new_mem(p), *fresh = new_mem(p), *empty = new_mem(p);
		assert_int_equal(rlt_state_init(p, src, 0), 0);
		assert_int_equal(rlt_state_copy(p, fresh, src), 0);
		unsigned got = 0;
		while (got < 100 && rlt_decide(p, src, now, 1, RLT_MODE_NOW, &at) == RLT_GO)
			got++;
		assert_true(got >= 1 && got < 100);
		assert_int_equal(rlt_state_copy(p, empty, src), 0);
		assert_int_equal(rlt_decide(p, empty, now, 1, RLT_MODE_NOW, &at), RLT_DENY);
		unsigned fresh_got = 0;
		while (fresh_got < 100 && rlt_decide(p, fresh, now, 1, RLT_MODE_NOW, &at) == RLT_GO)
			fresh_got++;
		assert_int_equal(fresh_got, got);
		free_state(p, empty);
		free_state(p, fresh);
		free_state(p, src);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_stands_where_src_stood),
		cmocka_unit_test(copy_of_fresh_and_of_exhausted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
