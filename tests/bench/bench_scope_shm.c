/*
 * bench_scope_shm.c: the cost of a conforming call (rlt__charge + rlt__settle, clock read
 * included) in process scope and in shared scope, with 1, 2 and 4 processes at once; and with a
 * redis:// scope, the calls one process makes per second and its round trips per 1000 calls.
 * Target: shared within 2x of process scope; redis under one round trip per 100 calls.
 * The redis part starts its own redis-server on a free loopback port (skipped without one).
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "charge.h"
#include "clock.h"
#include "policy.h"
#include "scope_redis.h"
#include "scope_shm.h"
#include "../unit/redis_server.h"

#define CALLS 2000000

static double run_calls(const char *rule, long calls, uint64_t *rts)
{
	static struct rlt__ruleset rs;
	const char *v[RLT_VAR_COUNT] = {rule, NULL, NULL, NULL, NULL};
	struct rlt_error err;
	struct rlt__ticket t;

	memset(&rs, 0, sizeof rs);
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	rlt_ns_t t0 = rlt__now();
	for (long i = 0; i < calls; i++) {
		if (rlt__charge(&rs, &t, RLT_VAR_CONNECT, 1, NULL, 0, 1) != 0) {
			fprintf(stderr, "bench: a call did not conform\n");
			exit(1);
		}
		rlt__settle(&rs, &t, 0, 1);
	}
	double ns = (double)(rlt__now() - t0) / (double)calls;
	if (rts)
		*rts = rs.rules[RLT_VAR_CONNECT][0].redis
		               ? rlt__redis_round_trips(rs.rules[RLT_VAR_CONNECT][0].redis)
		               : 0;
	return ns;
}

/* ns per call, averaged over nproc processes running at once. */
static double in_procs(const char *rule, int nproc)
{
	double *res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t kids[8];
	double sum = 0;

	fflush(stdout);
	for (int k = 0; k < nproc; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			res[k] = run_calls(rule, CALLS, NULL);
			_exit(0);
		}
	}
	for (int k = 0; k < nproc; k++) {
		waitpid(kids[k], NULL, 0);
		sum += res[k];
	}
	munmap(res, 4096);
	return sum / nproc;
}

static void redis_part(void)
{
	static const char *const rates[] = {"10000000/s", "1000000/s", "100000/s"};
	char rule[200];
	int port = rlt_test_free_port();
	pid_t srv;

	if (system("command -v redis-server >/dev/null") != 0) {
		printf("redis scope: skipped (no redis-server)\n");
		return;
	}
	srv = rlt_test_redis_start(port);
	if (srv > 0) {
		printf("redis scope, one process, conforming calls (lease = 10 ms of the rate):\n");
		for (size_t k = 0; k < sizeof rates / sizeof rates[0]; k++) {
			uint64_t rts;
			long calls = 1000000;
			snprintf(rule, sizeof rule, "%s burst=100000000 scope=redis://127.0.0.1:%d/bench-%d",
			         rates[k], port, (int)k);
			double ns = run_calls(rule, calls, &rts);
			/* the burst is large: every call conforms, and the lease (10 ms of the
			 * rate) alone sets how often a call waits on Redis */
			printf("  %-12s %10.0f calls/s  %8.1f ns/call  %6.2f round trips per 1000 calls\n",
			       rates[k], 1e9 / ns, ns, (double)rts * 1000 / (double)calls);
		}
	} else {
		printf("redis scope: skipped (redis-server did not answer)\n");
	}
	rlt_test_redis_stop(srv);
}

int main(void)
{
	char name[64], shared[200];

	snprintf(name, sizeof name, "bench-%d", (int)getpid());
	snprintf(shared, sizeof shared, "8000000000/s burst=1000000000000 scope=shared:%s", name);
	printf("conforming call (charge + settle, one token rule), ns per call:\n");
	printf("  %-10s %10s %10s %8s\n", "processes", "process", "shared", "ratio");
	for (int n = 1; n <= 4; n *= 2) {
		double a = in_procs("8000000000/s burst=1000000000000", n);
		double b = in_procs(shared, n);
		printf("  %-10d %10.1f %10.1f %7.2fx\n", n, a, b, b / a);
	}
	struct rlt_error err;
	rlt__shm_remove(name, &err);
	redis_part();
	return 0;
}
