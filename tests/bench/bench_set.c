/*
 * bench_set.c: ns per conforming charge and settle (what a hook pays for its rules on every
 * call) of one token rule that never binds, without a published page and with one. With a page
 * the charge also checks the page's control area for a `rlthrottle set` request (a relaxed load
 * and a compare) and rolls the history once a second. Build the same file against another
 * tree's librlt.a to compare (the figure: the check costs at most 2 ns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"
#include "publish.h"

#define ROUNDS 5

/* calls per round: argv[1] (a short run under valgrind counts instructions where the machine
 * is too busy for a timing to mean anything) */
static uint64_t CALLS = 20000000ull;

static rlt_ns_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (rlt_ns_t)ts.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)ts.tv_nsec;
}

/* The best of ROUNDS runs: the least disturbed by the other tenants of the machine. */
static double per_call(struct rlt__ruleset *rs)
{
	double best = 1e9;
	rlt_ns_t base = mono();

	for (int r = 0; r < ROUNDS; r++) {
		struct rlt__ticket t;
		rlt_ns_t t0 = mono();
		for (uint64_t i = 0; i < CALLS; i++) {
			/* the fake clock moves 1 ns a call: the charge is timed, not the clock */
			if (rlt__charge_wait_at(rs, &t, RLT_VAR_SEND, 1, NULL, 100, 1, base + i) != 0)
				return -1;
			rlt__settle(rs, &t, 100, 1);
		}
		double ns = (double)(mono() - t0) / (double)CALLS;
		if (ns < best)
			best = ns;
		base += CALLS;
	}
	return best;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		CALLS = strtoull(argv[1], NULL, 10);
	static struct rlt__ruleset rs;
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "1TB/s", NULL, NULL};
	struct rlt_error err;

	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	rs.stats_on = 1;
	/* argv[2] "page": only the run with a page (instruction counts of one configuration) */
	if (argc <= 2 || strcmp(argv[2], "page") != 0)
		printf("charge+settle, one token rule, stats on, no page:   %.2f ns\n", per_call(&rs));
	if (argc > 2 && strcmp(argv[2], "page") != 0)
		return 0;
	if (rlt__pub_create(&rs, getpid(), 0, &err) != 0) {
		fprintf(stderr, "no page: %s\n", err.msg);
		return 1;
	}
	printf("charge+settle, one token rule, published page:      %.2f ns\n", per_call(&rs));
	rlt__pub_destroy(&rs);
	return 0;
}
