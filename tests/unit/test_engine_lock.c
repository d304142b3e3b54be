/* test_engine_lock.c: the engines' lock (engine_lock.c). Exclusive between threads; entered
 * again by its own thread (a signal handler interrupting a decision) it does not wait, and the
 * nested call is charged; held by a thread of an older fork generation it is free. Then the
 * same through the public API alone: a SIGALRM handler deciding on the state the interrupted
 * loop decides on, and fork() beside a busy thread. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "engine_harness.h"
#include "engine_lock.h"

/* ----- the lock itself ----- */

#define LOCK_THREADS 4
#define LOCK_ROUNDS 100000

struct counted {
	struct rlt__lock lock;
	uint64_t counter; /* plain: only the lock keeps the increments whole */
};

static void *count_main(void *arg)
{
	struct counted *c = arg;

	for (int i = 0; i < LOCK_ROUNDS; i++) {
		assert_int_equal(rlt__lock_take(&c->lock), RLT_LOCK_HELD);
		c->counter++;
		rlt__lock_release(&c->lock);
	}
	return NULL;
}

/* The tests run for a local state and a shared one: their flags come as the test's state. */
static unsigned flags_local = 0, flags_shared = RLT_STATE_SHARED;
#define LOCAL_AND_SHARED(f)                                                                        \
	{#f "_local", f, NULL, NULL, &flags_local}, {#f "_shared", f, NULL, NULL, &flags_shared}

static void exclusive(void **s)
{
	unsigned flags = *(unsigned *)*s;
	struct counted *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE,
	                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_t id[LOCK_THREADS];

	assert_true(c != MAP_FAILED);
	assert_int_equal(rlt__lock_init(&c->lock, flags), 0);
	c->counter = 0;
	for (int i = 0; i < LOCK_THREADS; i++)
		assert_int_equal(pthread_create(&id[i], NULL, count_main, c), 0);
	for (int i = 0; i < LOCK_THREADS; i++)
		assert_int_equal(pthread_join(id[i], NULL), 0);
	assert_int_equal(c->counter, (uint64_t)LOCK_THREADS * LOCK_ROUNDS);
	rlt__lock_destroy(&c->lock);
	munmap(c, sizeof *c);
}

static void self(void **s)
{
	unsigned flags = *(unsigned *)*s;
	struct rlt__lock l;

	assert_int_equal(rlt__lock_init(&l, flags), 0);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_HELD);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_SELF);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_SELF);
	rlt__lock_release(&l);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_HELD);
	rlt__lock_release(&l);
	rlt__lock_destroy(&l);
}

static void *take_and_vanish(void *arg)
{
	assert_int_equal(rlt__lock_take(arg), RLT_LOCK_HELD);
	return NULL; /* the thread ends holding it, as one does that a fork leaves behind */
}

/* A word taken by a thread of the parent generation: after the generation moves on (what the
 * fork handler does in a child) it is free, and the taker is told to repair. The thread here
 * ended instead of being left behind by a fork; the lock cannot tell the two apart. */
static void older_generation_taken_over(void **s)
{
	struct rlt__lock l;
	pthread_t t;

	(void)s;
	assert_int_equal(rlt__lock_init(&l, 0), 0);
	assert_int_equal(pthread_create(&t, NULL, take_and_vanish, &l), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	rlt__lock_forked();
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_RECOVERED);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_SELF);
	rlt__lock_release(&l);
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_HELD);
	rlt__lock_release(&l);
	/* this thread's own word of the older generation is no longer its own */
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_HELD);
	rlt__lock_forked();
	assert_int_equal(rlt__lock_take(&l), RLT_LOCK_RECOVERED);
	rlt__lock_release(&l);
}

/* ----- a decision nested in the holder's: admitted at once, charged ----- */

/* 10 per second. 4 go at 100 ns; then, with the lock held as by an interrupted decision, two
 * nested calls of 3 and 2 go at once and one gives 1 back: 4 are pending. After the release
 * 2 are left: a call of 3 is denied, one of 2 goes, and nothing is left. */
static void nested_charged(enum rlt_algo algo, unsigned flags)
{
	struct eng e;
	rlt_ns_t at;
	void *shared = NULL;
	size_t size = 0;

	mk(&e, algo, 10, SEC, NEVER);
	if (flags) {
		size = e.ops->state_size(&e.p);
		shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		assert_true(shared != MAP_FAILED);
		e.ops->destroy(&e.p, e.state);
		free(e.state);
		e.state = shared;
		assert_int_equal(e.ops->init(&e.p, e.state, flags), 0);
	}
	struct rlt__lock *l = e.state; /* white box: the lock is the state's first member */

	assert_int_equal(dec(&e, 100, 4, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(rlt__lock_take(l), RLT_LOCK_HELD);
	assert_int_equal(dec(&e, 150, 3, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(at, 150);
	assert_int_equal(dec(&e, 160, 2, RLT_MODE_RESERVE, &at), RLT_GO);
	assert_int_equal(at, 160);
	refund(&e, 160, 1);
	assert_int_equal(avail(&e, 170), 0); /* nested: nothing known to spare */
	assert_int_equal(rlt__lock_pending(l), 4);
	rlt__lock_release(l);
	assert_int_equal(avail(&e, 200), 2);
	assert_int_equal(dec(&e, 200, 3, RLT_MODE_NOW, &at), RLT_DENY);
	assert_int_equal(dec(&e, 200, 2, RLT_MODE_NOW, &at), RLT_GO);
	assert_int_equal(avail(&e, 300), 0);
	assert_int_equal(rlt__lock_pending(l), 0);
	/* a period later everything has left */
	assert_int_equal(avail(&e, 2 * SEC), 10);
	if (shared) {
		e.ops->destroy(&e.p, e.state);
		munmap(shared, size);
	} else {
		unmk(&e);
	}
}

/* For the algorithm the test's state names, on a local state and a shared one. */
static void nested_both(void **s)
{
	enum rlt_algo algo = *(enum rlt_algo *)*s;

	nested_charged(algo, 0);
	nested_charged(algo, RLT_STATE_SHARED);
}
static enum rlt_algo algo_sw = RLT_ALGO_SLIDING_WINDOW, algo_log = RLT_ALGO_SLIDING_LOG;

/* A copy made while nested calls are pending stands where the original stands. */
static void copy_keeps_pending(void **s)
{
	enum rlt_algo algos[] = {RLT_ALGO_SLIDING_WINDOW, RLT_ALGO_SLIDING_LOG};

	(void)s;
	for (int i = 0; i < 2; i++) {
		struct eng e;
		rlt_ns_t at;
		void *copy;

		mk(&e, algos[i], 10, SEC, NEVER);
		assert_int_equal(rlt__lock_take(e.state), RLT_LOCK_HELD);
		assert_int_equal(dec(&e, 100, 6, RLT_MODE_NOW, &at), RLT_GO);
		rlt__lock_release(e.state);
		copy = aligned_alloc(64, (e.ops->state_size(&e.p) + 63) / 64 * 64);
		assert_non_null(copy);
		assert_int_equal(e.ops->copy(&e.p, copy, e.state), 0);
		assert_int_equal(e.ops->available(&e.p, copy, 200), 4);
		assert_int_equal(avail(&e, 200), 4);
		e.ops->destroy(&e.p, copy);
		free(copy);
		unmk(&e);
	}
}

/* ----- through the public API alone ----- */

static rlt_ns_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (rlt_ns_t)ts.tv_sec * SEC + (rlt_ns_t)ts.tv_nsec;
}

/* A hang is a failure, not a stuck test run. */
static _Atomic int done;
static void *watchdog(void *arg)
{
	const char *what = arg;

	for (rlt_ns_t end = mono() + 10 * SEC; !atomic_load(&done) && mono() < end;) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (!atomic_load(&done)) {
		fprintf(stderr, "HANG: %s did not finish within 10 s\n", what);
		_exit(1);
	}
	return NULL;
}

static struct rlt_params sig_p;
static void *sig_state;
static _Atomic uint64_t sig_clock;
static _Atomic uint64_t in_handler;

static void on_alarm(int sig)
{
	rlt_ns_t at;
	int saved = errno;

	(void)sig;
	if (rlt_decide(&sig_p, sig_state, atomic_load(&sig_clock), 1, RLT_MODE_RESERVE, &at) !=
	    RLT_DENY)
		rlt_refund(&sig_p, sig_state, at, 1);
	atomic_fetch_add(&in_handler, 1);
	errno = saved;
}

/* A state of RULE (an RLT_SEND rule's text) on the heap, initialised; *P gets its params. */
static void *state_of(const char *rule, struct rlt_params *p)
{
	struct rlt_rule r;
	struct rlt_error err;
	size_t n;

	assert_int_equal(rlt_rules_parse(RLT_VAR_SEND, rule, &r, 1, &n, &err), 0);
	*p = r.params;
	return state_new(p);
}

/* SIGALRM every 20 us for 300 ms; its handler decides on the state the loop decides on. */
static void signal_nested(const char *rule)
{
	struct itimerval it = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa = {.sa_handler = on_alarm};
	pthread_t wd;
	sigset_t block;
	uint64_t loops = 0;

	sig_state = state_of(rule, &sig_p);
	atomic_store(&sig_clock, SEC);
	atomic_store(&in_handler, 0);
	atomic_store(&done, 0);
	/* the watchdog thread never takes the SIGALRMs: they are for the deciding loop */
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	assert_int_equal(pthread_create(&wd, NULL, watchdog, (void *)rule), 0);
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
	for (rlt_ns_t end = mono() + 300 * 1000 * 1000; mono() < end; loops++) {
		rlt_ns_t at;
		if (rlt_decide(&sig_p, sig_state, atomic_fetch_add(&sig_clock, 1000), 1,
		               RLT_MODE_RESERVE, &at) != RLT_DENY)
			rlt_refund(&sig_p, sig_state, at, 1);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	atomic_store(&done, 1);
	pthread_join(wd, NULL);
	print_message("%s: %llu decisions, %llu in the handler\n", rule, (unsigned long long)loops,
	              (unsigned long long)atomic_load(&in_handler));
	assert_true(atomic_load(&in_handler) > 0);
	rlt_state_destroy(&sig_p, sig_state);
	free(sig_state);
}

static void signal_nested_all(void **s)
{
	(void)s;
	signal_nested("100000B/s algo=sliding-window");
	signal_nested("100000msg/s algo=sliding-log");
	signal_nested("100000B/s algo=fixed-window");
	signal_nested("100000B/s algo=token");
	signal_nested("100000B/s algo=leaky");
}

static struct rlt_params busy_p;
static void *busy_state;
static _Atomic int busy_stop;

static void *busy_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&busy_stop)) {
		rlt_ns_t at;
		if (rlt_decide(&busy_p, busy_state, mono(), 1, RLT_MODE_NOW, &at) == RLT_GO)
			rlt_refund(&busy_p, busy_state, at, 1);
	}
	return NULL;
}

/* A thread decides in a loop; 200 children forked beside it each decide once. A child that
 * inherited the lock held by that thread (which it does not have) must not wait for it. */
static void fork_beside_busy_thread(const char *rule)
{
	pthread_t t;
	int hung = 0;

	busy_state = state_of(rule, &busy_p);
	atomic_store(&busy_stop, 0);
	assert_int_equal(pthread_create(&t, NULL, busy_main, NULL), 0);
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		int status = 0;

		assert_true(pid >= 0);
		if (pid == 0) {
			rlt_ns_t at;
			rlt_decide(&busy_p, busy_state, mono(), 1, RLT_MODE_NOW, &at);
			_exit(0);
		}
		/* bounded: 2 s a child */
		for (int w = 0; w < 2000; w++) {
			struct timespec ts = {0, 1000 * 1000};
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			if (w == 1999) {
				hung++;
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
			}
			nanosleep(&ts, NULL);
		}
	}
	atomic_store(&busy_stop, 1);
	pthread_join(t, NULL);
	print_message("%s: %d of 200 children hung\n", rule, hung);
	assert_int_equal(hung, 0);
	rlt_state_destroy(&busy_p, busy_state);
	free(busy_state);
}

static void fork_beside_busy(void **s)
{
	(void)s;
	fork_beside_busy_thread("100000B/s algo=sliding-window");
	fork_beside_busy_thread("100000msg/s algo=sliding-log");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LOCAL_AND_SHARED(exclusive),
		LOCAL_AND_SHARED(self),
		cmocka_unit_test(older_generation_taken_over),
		{"sw_nested_charged", nested_both, NULL, NULL, &algo_sw},
		{"log_nested_charged", nested_both, NULL, NULL, &algo_log},
		cmocka_unit_test(copy_keeps_pending),
		cmocka_unit_test(signal_nested_all),
		cmocka_unit_test(fork_beside_busy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
