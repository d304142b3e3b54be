/* nbloop: an event loop on one O_NONBLOCK TCP socket, as nginx, libuv or Go run one: it receives
 * to EOF (-r) or sends BYTES of the test pattern (-s BYTES), waiting with epoll (level or edge
 * triggered) or poll, and times each non-blocking call (none may sleep).
 *
 *   nbloop -p PORT (-r | -s BYTES) -w epoll|epollet|poll [-b SIZE] [-T SECONDS]
 *   nbloop -u -P PORTFILE -c COUNT -w ...   UDP: bind 127.0.0.1, write the port, receive COUNT
 *                                           datagrams (bytes and fnv: of all, in order)
 *   -w epollet: edge-triggered, each wake-up calls until EAGAIN; epoll, poll: one call per wake-up;
 *      epolloneshot: EPOLLONESHOT, calls until EAGAIN and re-arms (EPOLL_CTL_MOD) before it waits
 * Output: bytes=N fnv=HEX calls=C eagain=E waits=W max_call_ns=M slow_calls=S elapsed_ns=NS
 *         cpu_ns=NS
 * slow_calls counts the calls that took over 2 ms; elapsed_ns runs from the connect to the end.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>

#include "itest.h"

int main(int argc, char **argv)
{
	int port = 0, opt, recv_mode = 0, secs = 60, udp = 0;
	unsigned long long count = 0, msgs = 0;
	const char *portfile = NULL;
	unsigned long long total = 0, moved = 0, calls = 0, eagain = 0, waits = 0, slow = 0;
	uint64_t max_call = 0, h = FNV_INIT;
	size_t bsize = 65536;
	const char *how = "epoll";

	while ((opt = getopt(argc, argv, "p:rs:w:b:T:uP:c:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'r': recv_mode = 1; break;
		case 's': total = strtoull(optarg, NULL, 10); break;
		case 'w': how = optarg; break;
		case 'b': bsize = strtoul(optarg, NULL, 10); break;
		case 'T': secs = atoi(optarg); break;
		case 'u': udp = recv_mode = 1; break;
		case 'P': portfile = optarg; break;
		case 'c': count = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	int oneshot = !strcmp(how, "epolloneshot");
	int et = oneshot || !strcmp(how, "epollet"), use_poll = !strcmp(how, "poll");
	if ((udp ? !portfile || !count : !port) || (!recv_mode && !total) || bsize == 0 || bsize > MAX_CALL ||
	    (!et && !use_poll && strcmp(how, "epoll"))) {
		fprintf(stderr, "usage: nbloop -p PORT (-r | -s BYTES) -w epoll|epollet|poll\n");
		return 2;
	}
	alarm((unsigned)secs);
	unsigned char *pat = recv_mode ? NULL : pattern_make();
	unsigned char *buf = malloc(bsize);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	uint64_t t0 = now_ns(), c0 = cpu_ns();
	if (udp) {
		socklen_t sl = sizeof sa;
		FILE *f;
		int rcvbuf = 1 << 20;
		/* room for what the sender puts there at once (best effort: capped by rmem_max) */
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		if (!buf || fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
		    getsockname(fd, (struct sockaddr *)&sa, &sl) != 0 ||
		    !(f = fopen(portfile, "w"))) {
			perror("nbloop: bind");
			return 2;
		}
		fprintf(f, "%d\n", ntohs(sa.sin_port));
		fclose(f);
	} else if (!buf || fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("nbloop: connect");
		return 2;
	}
	/* O_NONBLOCK through fcntl (the flag the hooks learn there) */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
		perror("nbloop: fcntl");
		return 2;
	}
	unsigned ev = recv_mode ? EPOLLIN : EPOLLOUT;
	int ep = -1;
	if (!use_poll) {
		struct epoll_event e = {.events = ev | (oneshot ? EPOLLONESHOT : et ? EPOLLET : 0)};
		e.data.fd = fd;
		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0) {
			perror("nbloop: epoll");
			return 2;
		}
	}
	for (;;) {
		/* the wait: bounded (-T), each returns by its own 1 s timeout at the latest */
		int rc;
		waits++;
		if (use_poll) {
			struct pollfd p = {.fd = fd, .events = (short)ev};
			rc = poll(&p, 1, 1000);
		} else {
			struct epoll_event out, arm = {.events = ev | EPOLLONESHOT};
			arm.data.fd = fd;
			if (oneshot && waits > 1 && epoll_ctl(ep, EPOLL_CTL_MOD, fd, &arm) != 0) {
				perror("nbloop: re-arm");
				return 2;
			}
			rc = epoll_wait(ep, &out, 1, 1000);
		}
		if (rc < 0 && errno != EINTR) {
			perror("nbloop: wait");
			return 2;
		}
		if (rc <= 0)
			continue;
		int done = 0;
		/* edge-triggered: call until EAGAIN (the edge is spent); else one call per wake-up */
		for (int k = 0; !done && (et || k == 0); k++) {
			uint64_t a = now_ns();
			ssize_t n;
			if (recv_mode) {
				n = recv(fd, buf, bsize, 0);
			} else {
				size_t want = total - moved < bsize ? (size_t)(total - moved) : bsize;
				n = send(fd, pat + moved % PAT_LEN, want, MSG_NOSIGNAL);
			}
			int err = errno;
			uint64_t d = now_ns() - a;
			calls++;
			max_call = d > max_call ? d : max_call;
			slow += d > 2000000u;
			if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
				eagain++;
				break;
			}
			if (n < 0) {
				fprintf(stderr, "nbloop: %s\n", ename(err));
				return 1;
			}
			if (recv_mode) {
				h = fnv_update(h, buf, (size_t)n);
				if (udp && msgs++ == 0)
					t0 = a; /* from the first datagram on */
				done = udp ? msgs >= count : n == 0;
			} else {
				h = fnv_update(h, pat + moved % PAT_LEN, (size_t)n);
				done = moved + (size_t)n >= total;
			}
			moved += (size_t)n;
		}
		if (done)
			break;
	}
	uint64_t t1 = now_ns();
	printf("bytes=%llu fnv=%016llx calls=%llu eagain=%llu waits=%llu max_call_ns=%llu "
	       "slow_calls=%llu elapsed_ns=%llu cpu_ns=%llu msgs=%llu\n",
	       moved, (unsigned long long)h, calls, eagain, waits, (unsigned long long)max_call,
	       slow, (unsigned long long)(t1 - t0), (unsigned long long)(cpu_ns() - c0), msgs);
	close(fd);
	return 0;
}
