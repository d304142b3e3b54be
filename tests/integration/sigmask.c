/* sigmask: what a program's signal mask calls do, checked from inside: SIGUSR1 blocked with
 * sigprocmask is held (not run) when raised, pending, reported in the old mask, and run once
 * unblocked; pthread_sigmask in a thread the same; a blocked SIGSYS request is never refused.
 * Prints "ok" lines, or "FAIL: what" and exits 1. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t ran;
static void on_usr1(int s)
{
	(void)s;
	ran++;
}

static int fails;
static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
}

static void *thread_main(void *arg)
{
	sigset_t set, old, pend;
	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	ran = 0;
	pthread_kill(pthread_self(), SIGUSR1);
	check(ran == 0, "thread: a blocked SIGUSR1 is held");
	sigpending(&pend);
	check(sigismember(&pend, SIGUSR1), "thread: it is pending");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	check(ran == 1, "thread: it runs once unblocked");
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	sigset_t set, old, cur, pend;
	pthread_t th;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	check(sigprocmask(SIG_BLOCK, &set, &old) == 0, "sigprocmask(SIG_BLOCK) succeeds");
	check(!sigismember(&old, SIGUSR1), "the old mask had SIGUSR1 unblocked");
	raise(SIGUSR1);
	check(ran == 0, "a blocked SIGUSR1 is held");
	sigpending(&pend);
	check(sigismember(&pend, SIGUSR1), "it is pending");
	sigprocmask(SIG_SETMASK, NULL, &cur);
	check(sigismember(&cur, SIGUSR1), "the mask read back has SIGUSR1");
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	check(ran == 1, "it runs once unblocked");
	/* all signals blocked, as worker threads and Go do: SIGSYS too is asked for */
	sigfillset(&set);
	check(sigprocmask(SIG_SETMASK, &set, &old) == 0, "blocking every signal succeeds");
	sigprocmask(SIG_SETMASK, &old, NULL);
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_join(th, NULL);
	return fails ? 1 : 0;
}
