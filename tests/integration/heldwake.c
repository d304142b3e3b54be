/*
 * heldwake: a thread asleep in epoll_wait (timeout -t MS) on an empty instance from before the
 * main thread connects without blocking to 127.0.0.1:PORT (-n N connects in turn, the last
 * one watched) and registers the socket edge-triggered, as Go's netpoller and a dial do. The
 * connect is held (RLT_CONNECT, RLT_NET latency or connect=timeout): its completion must
 * reach the thread already asleep when it is due, not at the thread's own timeout.
 * Prints "woke_ms=MS events=HEX so_error=NAME".
 *
 *   heldwake -p PORT [-n N] [-t MS]
 */
#include <pthread.h>
#include <sys/epoll.h>

#include "itest.h"

static int epfd, ms = 10000;
static struct epoll_event got;
static int ngot;

static void *waiter(void *x)
{
	(void)x;
	ngot = epoll_wait(epfd, &got, 1, ms);
	return NULL;
}

int main(int argc, char **argv)
{
	int port = 0, n = 1, opt, s = -1;

	while ((opt = getopt(argc, argv, "p:n:t:")) != -1) {
		if (opt == 'p')
			port = atoi(optarg);
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 't')
			ms = atoi(optarg);
		else
			return 2;
	}
	epfd = epoll_create1(0);
	pthread_t th;
	uint64_t t0 = now_ns();
	pthread_create(&th, NULL, waiter, NULL);
	usleep(100000); /* the waiter asleep first */
	for (int i = 0; i < n; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
			fprintf(stderr, "heldwake: connect: %s\n", strerror(errno));
			return 1;
		}
	}
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = 42};
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, s, &ev) != 0) {
		fprintf(stderr, "heldwake: epoll_ctl: %s\n", strerror(errno));
		return 1;
	}
	pthread_join(th, NULL);
	int err = 0;
	socklen_t l = sizeof err;
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &l);
	printf("woke_ms=%llu events=%x so_error=%s\n",
	       (unsigned long long)((now_ns() - t0) / 1000000), ngot > 0 ? got.events : 0,
	       err ? ename(err) : "0");
	return 0;
}
