/*
 * bench_keys.c: ns per conforming charge and settle of an accept under one token-bucket rule
 * that never binds, with key=peer (the key's state found in the rule's keytab) against the same
 * rule without a key (issue 11: target within 1.5x), on 1 and 2 threads, the calls spread over
 * 10 and 10,000 client addresses (keys=16384: every key stays). Statistics off. Each call
 * reads the clock (rlt__charge_wait_peer does), both with and without the key.
 *
 * Output: one line per case, "key=... threads=N keys=K ns=..." (the fastest of 15 rounds of
 * each thread: the least disturbed round on a shared machine).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "charge.h"
#include "clock.h"
#include "policy.h"

#define CALLS 200000u
#define ROUNDS 15

static struct rlt__ruleset rs_plain, rs_keyed;

struct job {
	struct rlt__ruleset *rs;
	unsigned nkeys, offset;
	double best;
	pthread_barrier_t *bar;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	struct rlt__peer *peers = calloc(j->nkeys, sizeof *peers);
	struct rlt__ticket t;

	if (!peers)
		abort();
	for (unsigned k = 0; k < j->nkeys; k++) {
		unsigned a = k + j->offset;
		peers[k] = (struct rlt__peer){.af = AF_INET, .addr = {10, (uint8_t)(a >> 16),
		                                                      (uint8_t)(a >> 8), (uint8_t)a},
		                              .port = 80};
	}
	j->best = 1e18;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(j->bar);
		rlt_ns_t t0 = rlt__now();
		for (unsigned i = 0, k = 0; i < CALLS; i++) {
			if (rlt__charge_wait_peer(j->rs, &t, RLT_VAR_ACCEPT, 1, NULL, &peers[k], 0, 1))
				abort();
			rlt__settle(j->rs, &t, 0, 1);
			if (++k == j->nkeys)
				k = 0;
		}
		double ns = (double)(rlt__now() - t0) / CALLS;
		if (ns < j->best)
			j->best = ns;
	}
	free(peers);
	return NULL;
}

static double run(struct rlt__ruleset *rs, unsigned threads, unsigned nkeys)
{
	pthread_t th[2];
	struct job j[2];
	pthread_barrier_t bar;
	double worst = 0;

	pthread_barrier_init(&bar, NULL, threads);
	for (unsigned i = 0; i < threads; i++) {
		/* the threads' clients are distinct, as two workers' connections are */
		j[i] = (struct job){.rs = rs, .nkeys = nkeys, .offset = i * nkeys, .bar = &bar};
		if (pthread_create(&th[i], NULL, worker, &j[i]) != 0)
			abort();
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		if (j[i].best > worst)
			worst = j[i].best;
	}
	pthread_barrier_destroy(&bar);
	return worst;
}

int main(void)
{
	const char *plain[RLT_VAR_COUNT] = {NULL, "1000000000/s", NULL, NULL, NULL};
	const char *keyed[RLT_VAR_COUNT] = {NULL, "1000000000/s key=peer keys=32768", NULL, NULL,
	                                    NULL};
	struct rlt_error err;

	if (rlt__ruleset_build(&rs_plain, plain, 0, NULL, NULL, &err) != 0 ||
	    rlt__ruleset_build(&rs_keyed, keyed, 0, NULL, NULL, &err) != 0) {
		fprintf(stderr, "bench_keys: %s\n", err.msg);
		return 1;
	}
	for (unsigned threads = 1; threads <= 2; threads++)
		for (unsigned nkeys = 10; nkeys <= 10000; nkeys *= 1000) {
			double a = run(&rs_plain, threads, nkeys), b = run(&rs_keyed, threads, nkeys);
			printf("threads=%u keys=%-5u no-key ns=%.2f key=peer ns=%.2f ratio=%.2f\n",
			       threads, nkeys, a, b, b / a);
		}
	return 0;
}
