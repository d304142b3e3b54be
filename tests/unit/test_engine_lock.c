/* test_engine_lock.c: src/engine_lock.c: the lock of the windows and the log. In shared memory
 * it is one lock for every process, and a process that dies holding it does not block the
 * others: the next holder is told (owner_died), once. Every step that could block runs in a
 * child process with a deadline, so that a lock that never comes is a failure, not a hang. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "engine.h"

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Waits up to ms for pid; kills it (by pid) when it is late. Returns its exit status, or -1
 * when it had to be killed or did not exit normally. */
static int wait_within(pid_t pid, unsigned ms)
{
	int status;
	for (unsigned t = 0; t < ms; t += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

struct shared {
	pthread_mutex_t m;
	_Atomic int step; /* how far the holder has got */
	_Atomic int inside; /* processes inside the lock now */
	_Atomic int most; /* the most ever inside at once */
};

static struct shared *map_shared(void)
{
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
	                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	atomic_init(&sh->step, 0);
	atomic_init(&sh->inside, 0);
	atomic_init(&sh->most, 0);
	assert_int_equal(rlt__engine_lock_init(&sh->m, RLT_STATE_SHARED), 0);
	return sh;
}

static void process_local(void **s)
{
	pthread_mutex_t m;
	int died = 7;
	(void)s;
	assert_int_equal(rlt__engine_lock_init(&m, 0), 0);
	assert_int_equal(rlt__engine_lock(&m, &died), 0);
	assert_int_equal(died, 0);
	assert_int_equal(pthread_mutex_unlock(&m), 0);
	pthread_mutex_destroy(&m);
}

/* One process holds the lock; another waits for it and gets it when the first lets go (a lock
 * private to a process would never wake the waiter of another). */
static void one_lock_for_every_process(void **s)
{
	(void)s;
	struct shared *sh = map_shared();
	pid_t holder = fork();
	assert_true(holder >= 0);
	if (holder == 0) {
		int died;
		if (rlt__engine_lock(&sh->m, &died) != 0 || died)
			_exit(1);
		atomic_store(&sh->step, 1);
		sleep_ms(200);
		atomic_store(&sh->step, 2);
		pthread_mutex_unlock(&sh->m);
		_exit(0);
	}
	while (atomic_load(&sh->step) == 0)
		sleep_ms(1);
	pid_t waiter = fork();
	assert_true(waiter >= 0);
	if (waiter == 0) {
		int died;
		if (rlt__engine_lock(&sh->m, &died) != 0 || died)
			_exit(1);
		/* it got the lock only after the holder let go */
		int ok = atomic_load(&sh->step) == 2;
		pthread_mutex_unlock(&sh->m);
		_exit(ok ? 0 : 3);
	}
	assert_int_equal(wait_within(holder, 5000), 0);
	assert_int_equal(wait_within(waiter, 5000), 0);
	munmap(sh, sizeof *sh);
}

/* Many processes, many rounds: never two inside at once. */
static void mutual_exclusion(void **s)
{
	(void)s;
	struct shared *sh = map_shared();
	pid_t pid[4];
	for (int p = 0; p < 4; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (pid[p] == 0) {
			for (int i = 0; i < 2000; i++) {
				int died;
				if (rlt__engine_lock(&sh->m, &died) != 0)
					_exit(1);
				int n = atomic_fetch_add(&sh->inside, 1) + 1;
				if (n > atomic_load(&sh->most))
					atomic_store(&sh->most, n);
				atomic_fetch_sub(&sh->inside, 1);
				pthread_mutex_unlock(&sh->m);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < 4; p++)
		assert_int_equal(wait_within(pid[p], 20000), 0);
	assert_int_equal(atomic_load(&sh->most), 1);
	munmap(sh, sizeof *sh);
}

/* A process that dies holding the lock: the next one gets it and is told, once; the one after
 * gets a lock in order again. */
static void a_holder_that_dies(void **s)
{
	(void)s;
	struct shared *sh = map_shared();
	pid_t dead = fork();
	assert_true(dead >= 0);
	if (dead == 0) {
		int died;
		if (rlt__engine_lock(&sh->m, &died) != 0)
			_exit(1);
		_exit(0); /* holding it, as a process killed mid-decision */
	}
	assert_int_equal(wait_within(dead, 5000), 0);
	pid_t next = fork();
	assert_true(next >= 0);
	if (next == 0) {
		int died = 0;
		if (rlt__engine_lock(&sh->m, &died) != 0)
			_exit(1);
		if (died != 1)
			_exit(2);
		pthread_mutex_unlock(&sh->m);
		died = 7;
		if (rlt__engine_lock(&sh->m, &died) != 0)
			_exit(3);
		if (died != 0)
			_exit(4);
		pthread_mutex_unlock(&sh->m);
		_exit(0);
	}
	assert_int_equal(wait_within(next, 5000), 0);
	/* and this process too: the lock was made consistent, not left unusable */
	int died = 7;
	assert_int_equal(rlt__engine_lock(&sh->m, &died), 0);
	assert_int_equal(died, 0);
	pthread_mutex_unlock(&sh->m);
	munmap(sh, sizeof *sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_local),
		cmocka_unit_test(one_lock_for_every_process),
		cmocka_unit_test(mutual_exclusion),
		cmocka_unit_test(a_holder_that_dies),
	};
	return cmocka_run_group_tests_name("engine_lock", tests, NULL, NULL);
}
