/* closeintr: close() of a connected socket while signals keep arriving, and how soon a close
 * frees an RLT_CONNS slot; for tests/reliability/test_close_signal.sh.
 *
 *   closeintr [-n N] [-D SECONDS] [-i USEC] [-t THREADS] loop
 *        a listener on loopback (a thread accepts and closes); THREADS threads (default 1)
 *        each N times (default 20000) or for SECONDS (default 5): socket, connect, close; a
 *        thread sends each of them SIGUSR1 every USEC us (default 100), its handler
 *        installed without SA_RESTART. A close that fails with EINTR is counted, and whether
 *        the fd is still open after it (fcntl F_GETFD): Linux closes the fd whatever close
 *        returns, so programs do not close it again.
 *        Prints: iterations=N close_eintr=E still_open=O connect_eintr=C connect_fail=F
 *                signals=S elapsed_ms=MS
 *   closeintr [-w MS] wake
 *        (under RLT_CONNS="2 action=delay") opens 2 connections, then a third connect waits
 *        while a thread closes the first after MS ms (default 300): how long after that close
 *        the third connect returned.
 *        Prints: open3=OK|ERRNAME wake_ms=X
 *   closeintr -a PORTA -b PORTB [-B BYTES] reuse
 *        listeners of its own on PORTA and PORTB (threads read and drop what comes); a
 *        connection to A at fd X sends 1 byte (so the throttle learns X), a connection to B
 *        replaces X with dup2 (no close is seen by anyone), then BYTES (default 262144) are
 *        written to X, and the same again the other way round (B learnt at X, A put there).
 *        Prints: same_fd=1|0 to_b_ms=X to_a_ms=Y
 * Exit status: 0, or 2 when a step could not be made at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define MAX_THREADS 16

static int port, lfd;
static long iters = 20000, usec = 100, wake_ms = 300, nthreads = 1;
static double seconds = 5;
static atomic_int stop;
static atomic_long signals, done_iters, close_eintr, still_open, connect_eintr, connect_fail;
static pid_t tids[MAX_THREADS];
static atomic_int ready;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&signals, 1, memory_order_relaxed);
}

static void block_usr1(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Accepts and closes, so that the backlog never fills; SIGUSR1 is not its business. */
static void *acceptor(void *arg)
{
	(void)arg;
	block_usr1();
	while (!atomic_load(&stop)) {
		int c = accept(lfd, NULL, NULL);
		if (c >= 0)
			close(c);
		else if (errno != EINTR && errno != ECONNABORTED)
			break;
	}
	return NULL;
}

/* Sends SIGUSR1 to each looping thread every usec microseconds (absolute deadlines). */
static void *signaller(void *arg)
{
	struct timespec t;
	pid_t pid = getpid();

	(void)arg;
	block_usr1();
	clock_gettime(CLOCK_MONOTONIC, &t);
	while (!atomic_load(&stop)) {
		t.tv_nsec += usec * 1000;
		while (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		for (long i = 0; i < nthreads; i++)
			if (tids[i])
				syscall(SYS_tgkill, pid, tids[i], SIGUSR1);
	}
	return NULL;
}

static void *looper(void *arg)
{
	long me = (long)(intptr_t)arg;
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, AF_INET, NULL, NULL, port);
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);

	tids[me] = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&ready, 1);
	for (long i = 0; i < iters && now_ns() < end; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0) {
			atomic_fetch_add(&connect_fail, 1);
			continue;
		}
		if (connect(fd, (struct sockaddr *)&ss, len) != 0) {
			/* EINTR: the attempt goes on in the background; the socket is closed anyway */
			if (errno == EINTR)
				atomic_fetch_add(&connect_eintr, 1);
			else
				atomic_fetch_add(&connect_fail, 1);
		}
		if (close(fd) != 0 && errno == EINTR) {
			atomic_fetch_add(&close_eintr, 1);
			if (fcntl(fd, F_GETFD) != -1) {
				atomic_fetch_add(&still_open, 1);
				/* bounded: closed for good so that the loop goes on */
				for (int k = 0; k < 100 && close(fd) != 0 && errno == EINTR; k++)
					;
			}
		}
		atomic_fetch_add(&done_iters, 1);
	}
	return NULL;
}

static int do_loop(void)
{
	pthread_t acc, sig, th[MAX_THREADS];
	struct sigaction sa;
	uint64_t t0 = now_ns();

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1; /* no SA_RESTART, as Python's handlers */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 2;
	lfd = listen_loopback("closeintr", AF_INET, SOCK_STREAM, NULL, NULL, 4096, NULL);
	if (lfd < 0)
		return 2;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(lfd, (struct sockaddr *)&ss, &sl);
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (pthread_create(&acc, NULL, acceptor, NULL) != 0)
		return 2;
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, looper, (void *)(intptr_t)i) != 0)
			return 2;
	/* bounded: the threads start within a second or the signaller starts without them */
	for (int k = 0; k < 1000 && atomic_load(&ready) < nthreads; k++)
		usleep(1000);
	if (pthread_create(&sig, NULL, signaller, NULL) != 0)
		return 2;
	for (long i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(sig, NULL);
	shutdown(lfd, SHUT_RDWR); /* wakes the acceptor */
	pthread_join(acc, NULL);
	printf("iterations=%ld close_eintr=%ld still_open=%ld connect_eintr=%ld connect_fail=%ld "
	       "signals=%ld elapsed_ms=%.0f\n",
	       atomic_load(&done_iters), atomic_load(&close_eintr), atomic_load(&still_open),
	       atomic_load(&connect_eintr), atomic_load(&connect_fail), atomic_load(&signals),
	       (double)(now_ns() - t0) / 1e6);
	return 0;
}

static _Atomic uint64_t closed_at;
static int first;

static void *closer(void *arg)
{
	(void)arg;
	usleep((useconds_t)wake_ms * 1000);
	closed_at = now_ns();
	close(first);
	return NULL;
}

static int do_wake(void)
{
	pthread_t th;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	lfd = listen_loopback("closeintr", AF_INET, SOCK_STREAM, NULL, NULL, 16, NULL);
	if (lfd < 0)
		return 2;
	getsockname(lfd, (struct sockaddr *)&ss, &sl);
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	/* the listener's queue holds them: nobody needs to accept */
	first = dial_loopback(NULL, port);
	int second = dial_loopback(NULL, port);
	if (first < 0 || second < 0) {
		printf("open1=%s open2=%s\n", first < 0 ? ename(errno) : "OK",
		       second < 0 ? ename(errno) : "OK");
		return 2;
	}
	if (pthread_create(&th, NULL, closer, NULL) != 0)
		return 2;
	int third = dial_loopback(NULL, port);
	uint64_t t = now_ns();
	int e = errno;
	pthread_join(th, NULL);
	printf("open3=%s wake_ms=%.2f\n", third < 0 ? ename(e) : "OK",
	       closed_at ? (double)((int64_t)(t - closed_at)) / 1e6 : -1.0);
	return 0;
}

static int port_a, port_b;
static long reuse_bytes = 262144;

static void *drain(void *arg)
{
	int l = (int)(intptr_t)arg;
	char buf[65536];

	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		while (read(c, buf, sizeof buf) > 0)
			;
		close(c);
	}
}

static int listen_on(int p)
{
	struct sockaddr_storage ss;
	socklen_t len = loopback_addr(&ss, AF_INET, NULL, NULL, p);
	int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
	pthread_t th;

	if (l < 0)
		return -1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(l, (struct sockaddr *)&ss, len) != 0 || listen(l, 16) != 0 ||
	    pthread_create(&th, NULL, drain, (void *)(intptr_t)l) != 0)
		return -1;
	pthread_detach(th);
	return l;
}

/* fd learnt as a connection to `from`, replaced by one to `then` without a close; the ms
 * that writing reuse_bytes to the fd takes then (-1: a step failed). */
static double replaced(int from, int then, int *same)
{
	static char buf[65536];
	int x = dial_loopback(NULL, from), y;
	uint64_t t0;
	long left = reuse_bytes;

	if (x < 0 || write(x, "x", 1) != 1 || (y = dial_loopback(NULL, then)) < 0)
		return -1;
	if (dup2(y, x) != x)
		return -1;
	close(y);
	*same = 1;
	t0 = now_ns();
	while (left > 0) {
		ssize_t n = write(x, buf, left < (long)sizeof buf ? (size_t)left : sizeof buf);
		if (n <= 0)
			return -1;
		left -= n;
	}
	double ms = (double)(now_ns() - t0) / 1e6;
	close(x);
	return ms;
}

static int do_reuse(void)
{
	int same = 0;

	if (listen_on(port_a) < 0 || listen_on(port_b) < 0)
		return 2;
	double to_b = replaced(port_a, port_b, &same);
	double to_a = replaced(port_b, port_a, &same);
	printf("same_fd=%d to_b_ms=%.1f to_a_ms=%.1f\n", same, to_b, to_a);
	return to_b < 0 || to_a < 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "n:D:i:t:w:a:b:B:")) != -1) {
		switch (opt) {
		case 'n': iters = atol(optarg); break;
		case 'D': seconds = atof(optarg); break;
		case 'i': usec = atol(optarg); break;
		case 't': nthreads = atol(optarg); break;
		case 'w': wake_ms = atol(optarg); break;
		case 'a': port_a = atoi(optarg); break;
		case 'b': port_b = atoi(optarg); break;
		case 'B': reuse_bytes = atol(optarg); break;
		default: return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS || usec < 1 || optind >= argc)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[optind], "loop"))
		return do_loop();
	if (!strcmp(argv[optind], "wake"))
		return do_wake();
	if (!strcmp(argv[optind], "reuse"))
		return do_reuse();
	return 2;
}
