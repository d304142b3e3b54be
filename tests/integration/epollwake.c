/*
 * epollwake: a thread asleep in epoll_wait from before the first time a budget is short. One
 * throttled TCP socket (loopback, non-blocking), registered edge-triggered for EPOLLIN; a
 * thread waits on it (epoll_wait with -t MS, -1 for none) and tells the main thread when it
 * is ready; the main thread reads it until EAGAIN, then waits to be told (at most 1 s: a
 * longer wait is a stall). A child of its own sends without pause. Under --seccomp the
 * waiter's first wait is begun before the waits trap (trap_waits.c): it must still be woken
 * when the budget allows, and return by its own timeout. Prints key=value lines: bytes, how
 * long, CPU, stalls, the waiter's EINTRs, and how far past its timeout a wait that timed out
 * returned at the most, and the number of seccomp filters the process has at the end
 * (seccomp_filters, -1 when the kernel does not say): under --seccomp the waits' filter is
 * stacked only once a wait could hold a socket (test_wait_cheap).
 *
 *   epollwake -t MS -s SECONDS
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "itest.h"

static int epfd, tell[2], ms = -1;
static _Atomic uint64_t eintr, over_max, woken;

/* Seccomp_filters: in /proc/self/status (Linux 5.9); -1 when absent. */
static long seccomp_filters(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "Seccomp_filters:", 16))
			n = strtol(line + 16, NULL, 10);
	fclose(f);
	return n;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000000; i++) {
		struct epoll_event e;
		uint64_t w0 = now_ns();
		int n = epoll_wait(epfd, &e, 1, ms);
		uint64_t took = now_ns() - w0, lim = (uint64_t)ms * 1000000u;
		if (n < 0 && errno == EINTR) {
			eintr++;
			continue;
		}
		if (n < 0)
			break;
		if (n == 0 && ms >= 0 && took > lim && took - lim > over_max)
			over_max = took - lim;
		if (n > 0) {
			woken++;
			if (write(tell[1], "r", 1) < 0)
				break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = 2;
	int opt;

	while ((opt = getopt(argc, argv, "t:s:")) != -1) {
		switch (opt) {
		case 't': ms = atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		default: return 2;
		}
	}
	pid_t child;
	int fd = peer_child(0, &child);
	if (fd < 0 || pipe(tell)) {
		perror("pipe");
		return 1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	struct epoll_event e = {.events = EPOLLIN | EPOLLET};
	e.data.fd = fd;
	epfd = epoll_create1(0);
	/* wait for the child's first bytes, so that the waiter's first wait finds none new: it
	 * sleeps in the kernel before the reads below spend the budget */
	struct pollfd p = {fd, POLLIN, 0};
	if (epfd < 0 || poll(&p, 1, 5000) != 1) {
		perror("epoll");
		return 1;
	}
	usleep(100000);
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e)) {
		perror("epoll_ctl");
		return 1;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, waiter, NULL))
		return 1;
	static char buf[65536];
	uint64_t bytes = 0, stalls = 0, rounds = 0;
	uint64_t c0 = cpu_ns(), t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
	/* the waiter's first wait (edge-triggered: the data already there gives it one event) */
	usleep(100000);
	while (now_ns() < end && rounds++ < 1000000) {
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			bytes += (uint64_t)n;
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			perror("read");
			return 1;
		}
		char c;
		struct pollfd q = {tell[0], POLLIN, 0};
		if (poll(&q, 1, 1000) != 1) {
			stalls++;
			continue;
		}
		while (read(tell[0], &c, 1) == 1 && poll(&q, 1, 0) == 1)
			;
	}
	peer_stop(child, bytes, t0, c0);
	printf("stalls=%llu woken=%llu eintr=%llu over_max_ns=%llu seccomp_filters=%ld\n",
	       (unsigned long long)stalls, (unsigned long long)woken, (unsigned long long)eintr,
	       (unsigned long long)over_max, seccomp_filters());
	fflush(stdout);
	_exit(0); /* the waiter may be asleep for good */
}
