/* test_wait.c: src/wait.c: a delayed call sleeps until an absolute instant of CLOCK_MONOTONIC
 * and goes on sleeping toward that same instant after a signal handler runs; a wait for a
 * change ends when another thread or process changes the word, or at its deadline, never early
 * because of a signal; errno is never changed. The sleep's arguments are checked exactly
 * through a stand-in for clock_nanosleep (UNIT_WRAP in the Makefile); the rest is measured on
 * the real clock with generous bounds. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "clock.h"
#include "wait.h"

/* TSan holds a handler back while the thread is in a call it does not intercept as blocking
 * (clock_nanosleep here) and then runs it once for all the signals of that kind that came: the
 * handler ran, but not once per signal. */
#if defined(__SANITIZE_THREAD__)
#define SIGNALS_COALESCE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIGNALS_COALESCE 1
#endif
#endif
#ifndef SIGNALS_COALESCE
#define SIGNALS_COALESCE 0
#endif

#define MS 1000000ull
#define SEC RLT_NS_PER_SEC

int __real_clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem);
int __wrap_clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem);

/* Set: clock_nanosleep records its arguments and returns what the test queued (will_return),
 * without sleeping. Clear: the real one. */
static int fake_sleep;
static int fake_calls;

int __wrap_clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                           struct timespec *rem)
{
	if (!fake_sleep)
		return __real_clock_nanosleep(clk, flags, req, rem);
	fake_calls++;
	errno = ENOTTY; /* the C library may change errno on any call: the caller's must not */
	check_expected(clk);
	check_expected(flags);
	check_expected(req->tv_sec);
	check_expected(req->tv_nsec);
	return (int)mock();
}

static volatile sig_atomic_t nsignals;

static void on_signal(int sig)
{
	(void)sig;
	nsignals++;
}

/* SIGUSR1 every `period` ns to this process (no SA_RESTART: each one interrupts the sleep). */
static timer_t start_signals(rlt_ns_t period)
{
	struct sigaction sa;
	struct sigevent ev;
	timer_t t;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	assert_int_equal(timer_create(CLOCK_MONOTONIC, &ev, &t), 0);
	struct itimerspec its = {
		.it_interval = {0, (long)period},
		.it_value = {0, (long)period},
	};
	assert_int_equal(timer_settime(t, 0, &its, NULL), 0);
	nsignals = 0;
	return t;
}

static void stop_signals(timer_t t)
{
	timer_delete(t);
	signal(SIGUSR1, SIG_IGN);
}

/* The sleep asks for the absolute instant on CLOCK_MONOTONIC, asks again for the very same
 * instant after each interruption, and leaves errno as it found it. */
static void sleep_until_the_same_instant(void **s)
{
	(void)s;
	fake_sleep = 1;
	fake_calls = 0;
	for (int i = 0; i < 4; i++) {
		expect_value(__wrap_clock_nanosleep, clk, CLOCK_MONOTONIC);
		expect_value(__wrap_clock_nanosleep, flags, TIMER_ABSTIME);
		expect_value(__wrap_clock_nanosleep, req->tv_sec, 5);
		expect_value(__wrap_clock_nanosleep, req->tv_nsec, 999999999);
		will_return(__wrap_clock_nanosleep, i < 3 ? EINTR : 0);
	}
	errno = EDOM;
	rlt__sleep_until(6 * SEC - 1);
	assert_int_equal(errno, EDOM);
	assert_int_equal(fake_calls, 4);

	/* an error other than EINTR (a deadline the kernel refuses) ends the sleep */
	expect_value(__wrap_clock_nanosleep, clk, CLOCK_MONOTONIC);
	expect_value(__wrap_clock_nanosleep, flags, TIMER_ABSTIME);
	expect_value(__wrap_clock_nanosleep, req->tv_sec, 0);
	expect_value(__wrap_clock_nanosleep, req->tv_nsec, 0);
	will_return(__wrap_clock_nanosleep, EINVAL);
	rlt__sleep_until(0);
	assert_int_equal(errno, EDOM);
	assert_int_equal(fake_calls, 5);
	fake_sleep = 0;
}

static volatile sig_atomic_t intr_handled;
static void on_usr1(int sig)
{
	(void)sig;
	intr_handled++;
}

/* Whether the handler has run n times, within a second: TSan defers a handler to its next
 * intercepted call (the sleeps here), the kernel runs it at once. */
static int handled(int n)
{
	for (int i = 0; i < 1000 && intr_handled < n; i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	return intr_handled == n;
}

/* The interruptible wait in sleeps: a signal that comes between two sleeps (here: raised while
 * the thread runs, between begin and the sleep) is held and ends the next sleep; one that comes
 * after the last sleep is found at the end, whose restore runs its handler; an ignored one ends
 * nothing; the thread's mask is back afterwards. (A plain sleep after a handler that ran
 * outside it would wait its whole length: the call would go on to its end.) */
static void intr_wait_holds_signals(void **s)
{
	struct sigaction sa = {.sa_handler = on_usr1}, old1, old2;
	struct rlt__intr_wait w;
	sigset_t before, after;
	(void)s;

	sigaction(SIGUSR1, &sa, &old1);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGUSR2, &sa, &old2);
	pthread_sigmask(SIG_SETMASK, NULL, &before);
	intr_handled = 0;

	rlt__intr_begin(&w);
	raise(SIGUSR1); /* between sleeps: held, its handler not run yet */
	assert_int_equal(intr_handled, 0);
	rlt_ns_t t0 = rlt__now();
	assert_int_equal(rlt__intr_sleep(&w, t0 + 5 * SEC), -EINTR);
	assert_true(rlt__now() - t0 < 2 * SEC); /* ended by it, not by the clock */
	assert_true(handled(1));
	assert_int_equal(rlt__intr_end(&w), 0); /* nothing more came */

	rlt__intr_begin(&w);
	assert_int_equal(rlt__intr_sleep(&w, rlt__now() + 10 * MS), 0);
	raise(SIGUSR1); /* after the last sleep */
	assert_int_equal(intr_handled, 1);
	assert_int_equal(rlt__intr_end(&w), 1);
	assert_true(handled(2)); /* run at the restore */

	rlt__intr_begin(&w);
	raise(SIGUSR2); /* ignored: ends nothing */
	assert_int_equal(rlt__intr_end(&w), 0);

	pthread_sigmask(SIG_SETMASK, NULL, &after);
	assert_int_equal(sigismember(&after, SIGUSR1), sigismember(&before, SIGUSR1));
	assert_int_equal(sigismember(&after, SIGALRM), sigismember(&before, SIGALRM));
	sigaction(SIGUSR1, &old1, NULL);
	sigaction(SIGUSR2, &old2, NULL);
}

static void sleep_until_real(void **s)
{
	(void)s;
	rlt_ns_t t0 = rlt__now(), at = t0 + 100 * MS;
	rlt__sleep_until(at);
	rlt_ns_t t1 = rlt__now();
	assert_true(t1 >= at);
	assert_true(t1 - at < 2 * SEC);
	/* a past instant: at once */
	t0 = rlt__now();
	rlt__sleep_until(t0 - SEC);
	assert_true(rlt__now() - t0 < SEC);
}

/* Signals every 10 ms through a 300 ms sleep: their handler runs, and the sleep still ends at
 * its instant, not at the first signal. */
static void sleep_until_through_signals(void **s)
{
	(void)s;
	timer_t t = start_signals(10 * MS);
	rlt_ns_t at = rlt__now() + 300 * MS;
	errno = EDOM;
	rlt__sleep_until(at);
	int errno_after = errno;
	rlt_ns_t t1 = rlt__now();
	stop_signals(t);
	/* read after the timer is gone: TSan runs a handler late, at its next interception */
	int n = nsignals;
	assert_true(n >= (SIGNALS_COALESCE ? 1 : 3));
	assert_true(t1 >= at);
	assert_true(t1 - at < 2 * SEC);
	assert_int_equal(errno_after, EDOM);
}

static _Atomic uint32_t word;

struct change {
	_Atomic uint32_t *word;
	rlt_ns_t after;
	int shared;
};

static void *change_later(void *arg)
{
	struct change *c = arg;
	rlt__sleep_until(rlt__now() + c->after);
	atomic_store(c->word, 1);
	rlt__wake_all(c->word, c->shared);
	return NULL;
}

/* A thread that signals must not take the signals meant for the waiting one. */
static void start_quiet_thread(pthread_t *th, struct change *c)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	assert_int_equal(pthread_create(th, NULL, change_later, c), 0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void wait_change_already_changed(void **s)
{
	(void)s;
	atomic_store(&word, 3);
	rlt_ns_t t0 = rlt__now();
	errno = EDOM;
	assert_int_equal(rlt__wait_change(&word, 2, RLT_NS_NEVER, 0), 0);
	assert_int_equal(errno, EDOM);
	assert_true(rlt__now() - t0 < SEC);
}

static void wait_change_woken(void **s)
{
	pthread_t th;
	struct change c = {&word, 100 * MS, 0};
	(void)s;
	atomic_store(&word, 0);
	rlt_ns_t t0 = rlt__now();
	start_quiet_thread(&th, &c);
	errno = EDOM;
	assert_int_equal(rlt__wait_change(&word, 0, RLT_NS_NEVER, 0), 0);
	rlt_ns_t waited = rlt__now() - t0;
	assert_int_equal(errno, EDOM);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&word), 1);
	assert_true(waited >= 90 * MS);
	assert_true(waited < 3 * SEC);
}

static void wait_change_times_out(void **s)
{
	(void)s;
	atomic_store(&word, 0);
	rlt_ns_t t0 = rlt__now(), deadline = t0 + 150 * MS;
	errno = EDOM;
	assert_int_equal(rlt__wait_change(&word, 0, deadline, 0), -ETIMEDOUT);
	rlt_ns_t t1 = rlt__now();
	assert_int_equal(errno, EDOM);
	assert_true(t1 >= deadline);
	assert_true(t1 - deadline < 2 * SEC);
	/* a deadline already past: at once */
	t0 = rlt__now();
	assert_int_equal(rlt__wait_change(&word, 0, t0 - MS, 0), -ETIMEDOUT);
	assert_true(rlt__now() - t0 < SEC);
}

/* Signals interrupt the futex: the wait goes on to its deadline, or to the change. */
static void wait_change_through_signals(void **s)
{
	pthread_t th;
	struct change c = {&word, 250 * MS, 0};
	(void)s;
	atomic_store(&word, 0);
	timer_t t = start_signals(10 * MS);
	rlt_ns_t deadline = rlt__now() + 200 * MS;
	errno = EDOM;
	int rc = rlt__wait_change(&word, 0, deadline, 0);
	rlt_ns_t t1 = rlt__now();
	int n = nsignals, errno_after = errno;
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(n >= 3);
	assert_true(t1 >= deadline);
	assert_int_equal(errno_after, EDOM);

	rlt_ns_t t0 = rlt__now();
	nsignals = 0;
	start_quiet_thread(&th, &c);
	rc = rlt__wait_change(&word, 0, RLT_NS_NEVER, 0);
	rlt_ns_t waited = rlt__now() - t0;
	n = nsignals;
	stop_signals(t);
	pthread_join(th, NULL);
	assert_int_equal(rc, 0);
	assert_true(n >= 3);
	assert_true(waited >= 240 * MS);
	assert_true(waited < 3 * SEC);
}

/* A word in memory shared with another process: that process's wake reaches this one (a
 * private futex would not, and the wait would last to its deadline). */
static void wait_change_across_processes(void **s)
{
	(void)s;
	_Atomic uint32_t *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                           -1, 0);
	assert_true(w != MAP_FAILED);
	atomic_store(w, 0);
	rlt_ns_t t0 = rlt__now();
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct change c = {w, 100 * MS, 1};
		change_later(&c);
		_exit(0);
	}
	int rc = rlt__wait_change(w, 0, t0 + 4 * SEC, 1);
	rlt_ns_t waited = rlt__now() - t0;
	int status;
	waitpid(pid, &status, 0);
	assert_int_equal(rc, 0);
	assert_true(waited < 3 * SEC);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	munmap((void *)w, 4096);
}

static void wake_all_keeps_errno(void **s)
{
	(void)s;
	errno = EDOM;
	rlt__wake_all(&word, 0);
	assert_int_equal(errno, EDOM);
	/* a futex call that fails (a misaligned word: EINVAL) leaves errno too */
	rlt__wake_all((_Atomic uint32_t *)(void *)((char *)&word + 1), 0);
	assert_int_equal(errno, EDOM);
	rlt__wake_all((_Atomic uint32_t *)(void *)((char *)&word + 1), 1);
	assert_int_equal(errno, EDOM);
}

static void *wait_in_thread(void *arg)
{
	int *rc = arg;
	*rc = rlt__wait_change(&word, 0, rlt__now() + 5 * SEC, 0);
	return NULL;
}

/* One wake reaches every waiter, not just the first (RLT_CONNS: a close can let several
 * waiting connects re-check). */
static void wake_all_wakes_all(void **s)
{
	pthread_t th[4];
	int rc[4];
	(void)s;
	atomic_store(&word, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, wait_in_thread, &rc[i]), 0);
	rlt__sleep_until(rlt__now() + 100 * MS); /* they are asleep by now, on a loaded machine too */
	rlt_ns_t t0 = rlt__now();
	atomic_store(&word, 1);
	rlt__wake_all(&word, 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(rc[i], 0);
	}
	assert_true(rlt__now() - t0 < 4 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sleep_until_the_same_instant),
		cmocka_unit_test(sleep_until_real),
		cmocka_unit_test(intr_wait_holds_signals),
		cmocka_unit_test(sleep_until_through_signals),
		cmocka_unit_test(wait_change_already_changed),
		cmocka_unit_test(wait_change_woken),
		cmocka_unit_test(wait_change_times_out),
		cmocka_unit_test(wait_change_through_signals),
		cmocka_unit_test(wait_change_across_processes),
		cmocka_unit_test(wake_all_keeps_errno),
		cmocka_unit_test(wake_all_wakes_all),
	};
	/* a wait that never ends is a failure, not a hang: the default action of SIGALRM ends the
	 * run */
	alarm(30);
	return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
