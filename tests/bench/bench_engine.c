/*
 * bench_engine.c: ns per conforming decision for each engine, one thread and two threads on one
 * state, printed beside the cost of one clock_gettime(CLOCK_MONOTONIC) measured in the same run.
 * The rule never binds (a rate far above the call rate), so every decision is the conforming
 * path: the one a hook pays on every call.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rlthrottle.h"

#define CALLS 20000000ull

static rlt_ns_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (rlt_ns_t)ts.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)ts.tv_nsec;
}

struct job {
	const struct rlt_params *p;
	void *state;
	uint64_t calls;
	uint64_t denied;
	rlt_ns_t base;
};

/* Fake time moves 1 ns a call: the decision is timed, not the clock. */
static void *run(void *arg)
{
	struct job *j = arg;
	rlt_ns_t at;
	for (uint64_t i = 0; i < j->calls; i++)
		j->denied += rlt_decide(j->p, j->state, j->base + i, 1, RLT_MODE_NOW, &at) != RLT_GO;
	return NULL;
}

static double timed(int threads, const struct rlt_params *p, void *state, uint64_t calls,
                    uint64_t *denied)
{
	pthread_t th[2];
	struct job jobs[2];
	rlt_ns_t t0 = mono();
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){p, state, calls, 0, 1000 * RLT_NS_PER_SEC};
		pthread_create(&th[i], NULL, run, &jobs[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		*denied += jobs[i].denied;
	}
	/* wall ns per decision per thread */
	return (double)(mono() - t0) / (double)calls;
}

int main(void)
{
	static const struct {
		enum rlt_algo algo;
		uint64_t amount, period_ns;
	} rules[] = {
		{RLT_ALGO_TOKEN, 16000000000ull, RLT_NS_PER_SEC},
		{RLT_ALGO_LEAKY, 16000000000ull, RLT_NS_PER_SEC},
		{RLT_ALGO_FIXED_WINDOW, 16000000000ull, RLT_NS_PER_SEC},
		{RLT_ALGO_SLIDING_WINDOW, 16000000000ull, RLT_NS_PER_SEC},
		{RLT_ALGO_SLIDING_LOG, 1000000ull, 100000ull},
	};
	struct rlt_error err;
	rlt_ns_t t0 = mono();
	volatile rlt_ns_t sink = 0;

	for (int i = 0; i < 5000000; i++)
		sink += mono();
	printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns\n", (double)(mono() - t0) / 5000000.0);
	printf("%-16s %14s %22s %15s\n", "engine", "1 thread ns", "2 threads ns (each)",
	       "denied");
	for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
		struct rlt_params p;
		/* the leaky bucket conforms at once only when nothing waits: give it a unit
		 * shorter than the 1 ns the fake clock moves per call */
		if (rlt_params_init(&p, rules[r].algo, rules[r].amount, 1, rules[r].period_ns,
		                    rules[r].algo == RLT_ALGO_LEAKY ? 1000000 : 0, RLT_NS_NEVER,
		                    &err)) {
			fprintf(stderr, "%s: %s\n", rlt_algo_name(rules[r].algo), err.msg);
			return 1;
		}
		void *state = aligned_alloc(64, (rlt_state_size(&p) + 63) / 64 * 64);
		if (!state || rlt_state_init(&p, state, 0))
			return 1;
		uint64_t denied1 = 0, denied2 = 0;
		double one = timed(1, &p, state, CALLS, &denied1);
		rlt_state_destroy(&p, state);
		rlt_state_init(&p, state, 0);
		double two = timed(2, &p, state, CALLS / 2, &denied2);
		/* two threads at the same fake instant: the leaky bucket must space them, so
		 * part of its calls take the (equally cheap) denial path */
		printf("%-16s %14.1f %22.1f %14.1f%%\n", rlt_algo_name(rules[r].algo), one, two,
		       100.0 * (double)(denied1 + denied2) / (double)(CALLS + CALLS / 2 * 2));
		rlt_state_destroy(&p, state);
		free(state);
	}
	return 0;
}
