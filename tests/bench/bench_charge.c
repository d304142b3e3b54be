/*
 * bench_charge.c: ns per conforming charge and settle (src/charge.c, what a hook pays per call
 * beyond its clock read and the real call) of one send under one token-bucket rule that never
 * binds: counting off, counting into private counters (RLT_STATS), and counting into the
 * published page (rlthrottle(1) COMMANDS). Built against this tree by `make bench`; tests/bench/publish.sh also
 * builds it against another tree's librlt.a (the previous release) to print both side by side.
 * The clock is read once per round: the charge is timed, not the clock, and the history's
 * once-a-second rollover is not on this path (a compare only).
 *
 * Output: one line per mode, "mode=... ns=..." (the fastest of 51 rounds: on a shared machine
 * the least disturbed round is the one that tells the cost).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "charge.h"
#include "clock.h"
#include "policy.h"
#if __has_include("publish.h")
#include "publish.h"
#define HAVE_PUBLISH 1
#endif

#define CALLS 200000ull
#define ROUNDS 51

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double run(struct rlt__ruleset *rs)
{
	double r[ROUNDS];
	struct rlt__ticket t;
	for (int k = 0; k < ROUNDS; k++) {
		rlt_ns_t now = rlt__now(), t0 = now;
		for (uint64_t i = 0; i < CALLS; i++) {
			if (rlt__charge_wait_at(rs, &t, RLT_VAR_SEND, 1, NULL, NULL, 1, 0, now) != 0)
				abort();
			rlt__settle(rs, &t, 1, 0);
		}
		r[k] = (double)(rlt__now() - t0) / (double)CALLS;
	}
	qsort(r, ROUNDS, sizeof r[0], cmp);
	return r[0];
}

int main(int argc, char **argv)
{
	static struct rlt__ruleset rs;
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, "16GB/s", NULL, NULL};
	const char *label = argc > 1 ? argv[1] : "this tree";
	struct rlt_error err;

	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0) {
		fprintf(stderr, "bench_charge: %s\n", err.msg);
		return 1;
	}
	rs.stats_on = 0;
	printf("%-12s mode=stats-off     ns=%.2f\n", label, run(&rs));
	rs.stats_on = 1;
	printf("%-12s mode=stats-private ns=%.2f\n", label, run(&rs));
#ifdef HAVE_PUBLISH
	if (rlt__pub_create(&rs, getpid(), &err) != 0) {
		fprintf(stderr, "bench_charge: %s\n", err.msg);
		return 1;
	}
	printf("%-12s mode=published     ns=%.2f\n", label, run(&rs));
	rlt__pub_destroy(&rs);
#endif
	return 0;
}
