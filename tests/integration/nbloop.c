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

/* The loop's socket, how it waits, and what it counts. */
struct run {
	int fd, ep, recv_mode, udp, et, oneshot, use_poll;
	unsigned ev;
	unsigned long long count, msgs, total, moved, calls, eagain, waits, slow;
	uint64_t max_call, h, t0;
	size_t bsize;
	unsigned char *buf, *pat;
};

/* UDP: bound to 127.0.0.1, its port written to portfile; TCP: connected to 127.0.0.1:port.
 * 0, or 2 when that fails. */
static int bind_or_connect(const struct run *r, int port, const char *portfile)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (r->udp) {
		socklen_t sl = sizeof sa;
		FILE *f;
		int rcvbuf = 1 << 20;
		/* room for what the sender puts there at once (best effort: capped by rmem_max) */
		(void)setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
		if (!r->buf || r->fd < 0 || bind(r->fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
		    getsockname(r->fd, (struct sockaddr *)&sa, &sl) != 0 ||
		    !(f = fopen(portfile, "w"))) {
			perror("nbloop: bind");
			return 2;
		}
		fprintf(f, "%d\n", ntohs(sa.sin_port));
		fclose(f);
	} else if (!r->buf || r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		perror("nbloop: connect");
		return 2;
	}
	return 0;
}

/* O_NONBLOCK, and the epoll instance unless the loop polls. 0, or 2 when that fails. */
static int prepare(struct run *r)
{
	/* O_NONBLOCK through fcntl (the flag the hooks learn there) */
	if (fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) | O_NONBLOCK) != 0) {
		perror("nbloop: fcntl");
		return 2;
	}
	r->ev = r->recv_mode ? EPOLLIN : EPOLLOUT;
	r->ep = -1;
	if (!r->use_poll) {
		struct epoll_event e = {.events = r->ev | (r->oneshot ? EPOLLONESHOT : r->et ? EPOLLET : 0)};
		e.data.fd = r->fd;
		r->ep = epoll_create1(0);
		if (r->ep < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->fd, &e) != 0) {
			perror("nbloop: epoll");
			return 2;
		}
	}
	return 0;
}

/* One wait, bounded: each returns by its own 1 s timeout at the latest. What poll or epoll_wait
 * returned (< 0 only for EINTR), or -2 for exit status 2. */
static int wait_once(struct run *r)
{
	int rc;
	r->waits++;
	if (r->use_poll) {
		struct pollfd p = {.fd = r->fd, .events = (short)r->ev};
		rc = poll(&p, 1, 1000);
	} else {
		struct epoll_event out, arm = {.events = r->ev | EPOLLONESHOT};
		arm.data.fd = r->fd;
		if (r->oneshot && r->waits > 1 && epoll_ctl(r->ep, EPOLL_CTL_MOD, r->fd, &arm) != 0) {
			perror("nbloop: re-arm");
			return -2;
		}
		rc = epoll_wait(r->ep, &out, 1, 1000);
	}
	if (rc < 0 && errno != EINTR) {
		perror("nbloop: wait");
		return -2;
	}
	return rc;
}

/* The calls of one wake-up, each timed. Sets *done at EOF, the datagram count or all sent;
 * 0, or 1 when a call fails. */
static int calls_once(struct run *r, int *done)
{
	/* edge-triggered: call until EAGAIN (the edge is spent); else one call per wake-up */
	for (int k = 0; !*done && (r->et || k == 0); k++) {
		uint64_t a = now_ns();
		ssize_t n;
		if (r->recv_mode) {
			n = recv(r->fd, r->buf, r->bsize, 0);
		} else {
			size_t want = r->total - r->moved < r->bsize ? (size_t)(r->total - r->moved) : r->bsize;
			n = send(r->fd, r->pat + r->moved % PAT_LEN, want, MSG_NOSIGNAL);
		}
		int err = errno;
		uint64_t d = now_ns() - a;
		r->calls++;
		r->max_call = d > r->max_call ? d : r->max_call;
		r->slow += d > 2000000u;
		if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			r->eagain++;
			break;
		}
		if (n < 0) {
			fprintf(stderr, "nbloop: %s\n", ename(err));
			return 1;
		}
		if (r->recv_mode) {
			r->h = fnv_update(r->h, r->buf, (size_t)n);
			if (r->udp && r->msgs++ == 0)
				r->t0 = a; /* from the first datagram on */
			*done = r->udp ? r->msgs >= r->count : n == 0;
		} else {
			r->h = fnv_update(r->h, r->pat + r->moved % PAT_LEN, (size_t)n);
			*done = r->moved + (size_t)n >= r->total;
		}
		r->moved += (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int port = 0, opt, secs = 60, rc;
	const char *portfile = NULL;
	const char *how = "epoll";
	struct run r = {.h = FNV_INIT, .bsize = 65536};

	while ((opt = getopt(argc, argv, "p:rs:w:b:T:uP:c:")) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'r': r.recv_mode = 1; break;
		case 's': r.total = strtoull(optarg, NULL, 10); break;
		case 'w': how = optarg; break;
		case 'b': r.bsize = strtoul(optarg, NULL, 10); break;
		case 'T': secs = atoi(optarg); break;
		case 'u': r.udp = r.recv_mode = 1; break;
		case 'P': portfile = optarg; break;
		case 'c': r.count = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	r.oneshot = !strcmp(how, "epolloneshot");
	r.et = r.oneshot || !strcmp(how, "epollet");
	r.use_poll = !strcmp(how, "poll");
	if ((r.udp ? !portfile || !r.count : !port) || (!r.recv_mode && !r.total) || r.bsize == 0 ||
	    r.bsize > MAX_CALL || (!r.et && !r.use_poll && strcmp(how, "epoll"))) {
		fprintf(stderr, "usage: nbloop -p PORT (-r | -s BYTES) -w epoll|epollet|poll\n");
		return 2;
	}
	alarm((unsigned)secs);
	r.pat = r.recv_mode ? NULL : pattern_make();
	r.buf = malloc(r.bsize);
	r.fd = socket(AF_INET, r.udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	r.t0 = now_ns();
	uint64_t c0 = cpu_ns();
	rc = bind_or_connect(&r, port, portfile);
	if (!rc)
		rc = prepare(&r);
	if (rc)
		return rc;
	for (int done = 0; !done;) {
		rc = wait_once(&r);
		if (rc == -2)
			return 2;
		if (rc > 0 && calls_once(&r, &done) != 0)
			return 1;
	}
	uint64_t t1 = now_ns();
	printf("bytes=%llu fnv=%016llx calls=%llu eagain=%llu waits=%llu max_call_ns=%llu "
	       "slow_calls=%llu elapsed_ns=%llu cpu_ns=%llu msgs=%llu\n",
	       r.moved, (unsigned long long)r.h, r.calls, r.eagain, r.waits,
	       (unsigned long long)r.max_call, r.slow, (unsigned long long)(t1 - r.t0),
	       (unsigned long long)(cpu_ns() - c0), r.msgs);
	close(r.fd);
	return 0;
}
