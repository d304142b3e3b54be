/*
 * waitdue: an event loop on one throttled TCP socket (loopback), as a program with deadlines
 * writes it: wait with a timeout for the socket to be ready, then one non-blocking call. A
 * child of its own is the other end: it sends without pause (-d recv) or reads everything
 * (-d send). Prints key=value lines: what moved, how long, the CPU used, how far past its
 * timeout a round (the wait and the call after it) ended at the most, and how many rounds
 * ended more than 20 ms past it.
 *
 *   waitdue -w poll|ppoll|select|pselect|epoll|epoll_et -d recv|send -t TIMEOUT_MS -s SECONDS
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/wait.h>

#include "itest.h"

static int wait_ready(const char *how, int fd, int epfd, int out, int ms)
{
	short ev = out ? POLLOUT : POLLIN;

	if (!strcmp(how, "poll") || !strcmp(how, "ppoll")) {
		struct pollfd p = {fd, ev, 0};
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		int rc = how[0] == 'p' && how[1] == 'p' ? ppoll(&p, 1, &ts, NULL) : poll(&p, 1, ms);
		return rc > 0 && (p.revents & ev);
	}
	if (!strcmp(how, "select") || !strcmp(how, "pselect")) {
		fd_set s;
		FD_ZERO(&s);
		FD_SET(fd, &s);
		struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		int rc = how[0] == 's' ? select(fd + 1, out ? NULL : &s, out ? &s : NULL, NULL, &tv)
		                       : pselect(fd + 1, out ? NULL : &s, out ? &s : NULL, NULL, &ts,
		                                 NULL);
		return rc > 0 && FD_ISSET(fd, &s);
	}
	struct epoll_event e;
	return epoll_wait(epfd, &e, 1, ms) > 0 && (e.events & (out ? EPOLLOUT : EPOLLIN));
}

int main(int argc, char **argv)
{
	const char *how = "poll", *dir = "recv";
	int ms = 20, opt;
	double secs = 2;

	while ((opt = getopt(argc, argv, "w:d:t:s:")) != -1) {
		switch (opt) {
		case 'w': how = optarg; break;
		case 'd': dir = optarg; break;
		case 't': ms = atoi(optarg); break;
		case 's': secs = atof(optarg); break;
		default: return 2;
		}
	}
	int out = !strcmp(dir, "send");
	/* the other end: a child's unthrottled work (it sends, or reads what the parent sends) */
	pid_t child;
	int fd = peer_child(out, &child);
	if (fd < 0)
		return 1;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	int epfd = -1;
	if (!strncmp(how, "epoll", 5)) {
		struct epoll_event e = {.events = (out ? EPOLLOUT : EPOLLIN) |
		                                  (strstr(how, "_et") ? EPOLLET : 0)};
		e.data.fd = fd;
		epfd = epoll_create1(0);
		if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e)) {
			perror("epoll");
			return 1;
		}
	}
	static char buf[65536];
	uint64_t bytes = 0, rounds = 0, ready = 0, timeouts = 0, eagain = 0, over_max = 0;
	uint64_t call_max = 0; /* the longest non-blocking call */
	uint64_t late = 0;     /* rounds that ended more than 20 ms past their timeout */
	uint64_t c0 = cpu_ns(), t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
	while (now_ns() < end && rounds < 1000000) {
		uint64_t r0 = now_ns();
		rounds++;
		if (wait_ready(how, fd, epfd, out, ms)) {
			ready++;
			uint64_t k0 = now_ns();
			ssize_t n = out ? send(fd, buf, sizeof buf, MSG_DONTWAIT)
			                : recv(fd, buf, sizeof buf, MSG_DONTWAIT);
			if (now_ns() - k0 > call_max)
				call_max = now_ns() - k0;
			if (n > 0)
				bytes += (uint64_t)n;
			else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				eagain++;
			else
				break;
		} else {
			timeouts++;
		}
		/* how far past its own deadline this round ended (the wait and the call after it) */
		uint64_t took = now_ns() - r0, lim = (uint64_t)ms * 1000000u;
		if (took > lim && took - lim > over_max)
			over_max = took - lim;
		if (took > lim + 20000000u)
			late++;
	}
	peer_stop(child, bytes, t0, c0);
	printf("rounds=%llu ready=%llu timeouts=%llu eagain=%llu over_max_ns=%llu call_max_ns=%llu "
	       "late=%llu\n",
	       (unsigned long long)rounds, (unsigned long long)ready, (unsigned long long)timeouts,
	       (unsigned long long)eagain, (unsigned long long)over_max,
	       (unsigned long long)call_max, (unsigned long long)late);
	return 0;
}
