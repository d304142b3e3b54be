/* test_conns_shared.c: RLT_CONNS in scope=shared:NAME across real processes. A process that
 * dies holding slots (no close runs: _exit, as SIGKILL) has them taken back when the limit is
 * reached; a forked child counts the connections it inherited as its own, so that parent and
 * child closing the same connection do not give its slot back twice. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conns.h"
#include "testutil.h"
#include "policy.h"
#include "scope_shm.h"

static struct rlt__ruleset rs;
static char name[64];

static void load(const char *fmt)
{
	char conns[160];
	const char *v[RLT_VAR_COUNT] = {NULL, NULL, NULL, NULL, conns};
	struct rlt_error err;

	snprintf(name, sizeof name, "rlt-unit-conns-%d-%ld", (int)getpid(), (long)time(NULL));
	snprintf(conns, sizeof conns, fmt, name);
	memset(&rs, 0, sizeof rs);
	if (rlt__ruleset_build(&rs, v, 0, NULL, NULL, &err) != 0)
		fail_msg("build: %s", err.msg);
}

static void unload(void)
{
	char obj[128];
	snprintf(obj, sizeof obj, "/" RLT_SHM_PREFIX "%s", name);
	shm_unlink(obj);
}

static uint32_t open_now(void)
{
	return atomic_load(rs.rules[RLT_VAR_CONNS][0].shared_open);
}

/* The child takes what it is told and ends without giving anything back. */
static pid_t child_takes(int n, int *status_fd)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint32_t held[RLT_MAX_RULES_PER_VAR] = {0};
		int err, ok = 1;
		close(p[0]);
		rlt__conns_identity();
		rlt__conns_forked(&rs, held);
		for (int i = 0; i < n; i++)
			ok &= rlt__conns_acquire(&rs, 0x1, &err) == 0;
		char c = ok ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(2);
		pause(); /* until the parent kills it */
		_exit(0);
	}
	close(p[1]);
	*status_fd = p[0];
	return pid;
}

static void dead_holders_slots_come_back(void **s)
{
	int fd, err;
	char c = 0;
	(void)s;
	load("3 scope=shared:%s");
	pid_t pid = child_takes(3, &fd);
	assert_int_equal(read(fd, &c, 1), 1);
	close(fd);
	assert_int_equal(c, 'y');
	assert_int_equal(open_now(), 3);
	/* alive: its slots are its own, the limit holds */
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), -1);
	assert_int_equal(err, ECONNREFUSED);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* the look for dead holders is at most every 100 ms: the first refusal above was one */
	struct timespec ms150 = {0, 150 * 1000 * 1000};
	nanosleep(&ms150, NULL);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(open_now(), 1);
	rlt__conns_release(&rs, 0x1);
	assert_int_equal(open_now(), 0);
	unload();
}

/* A zombie (ended, not reaped yet) has closed its fds: its slots come back too. */
static void zombie_holders_slots_come_back(void **s)
{
	int fd, err;
	char c = 0;
	(void)s;
	load("2 scope=shared:%s");
	pid_t pid = child_takes(2, &fd);
	assert_int_equal(read(fd, &c, 1), 1);
	close(fd);
	kill(pid, SIGKILL);
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0); /* still a zombie */
	struct timespec ms150 = {0, 150 * 1000 * 1000};
	nanosleep(&ms150, NULL);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(open_now(), 2);
	waitpid(pid, NULL, 0);
	rlt__conns_release(&rs, 0x1);
	rlt__conns_release(&rs, 0x1);
	assert_int_equal(open_now(), 0);
	unload();
}

/* The parent holds one connection and forks; both close it: the count goes back to 0, not
 * below (before, the second close made it wrap to 4294967295 and refused everything). */
static void fork_closes_once_each(void **s)
{
	int err, st;
	(void)s;
	load("4 scope=shared:%s");
	assert_int_equal(rlt__conns_acquire(&rs, 0x1, &err), 0);
	assert_int_equal(open_now(), 1);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint32_t held[RLT_MAX_RULES_PER_VAR] = {1};
		rlt__conns_identity();
		rlt__conns_forked(&rs, held);
		int ok = open_now() == 2;
		rlt__conns_release(&rs, 0x1); /* the child closes its copy */
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(open_now(), 1); /* the parent's copy is still open */
	rlt__conns_release(&rs, 0x1);
	assert_int_equal(open_now(), 0);
	unload();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dead_holders_slots_come_back),
		cmocka_unit_test(zombie_holders_slots_come_back),
		cmocka_unit_test(fork_closes_once_each),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
