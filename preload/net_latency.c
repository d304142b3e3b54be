/*
 * net_latency.c: latency (RLT_NET, rlthrottle(7) NETWORK CONDITIONS) read from the kernel's
 * receive timestamps: when the data at the head of a socket's queue arrived, when it is due,
 * and the receive that waits for it (net_latency.h says why). The timestamps are turned on by
 * us, once per socket, and taken out of what the program receives unless it asked for them.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "clock.h"
#include "hook_poll.h"
#include "net.h"
#include "net_hook.h"
#include "net_latency.h"
#include "preload.h"
#include "real.h"
#include "wait.h"

void rlt_pre_latency_stamps_on(int fd, struct rlt_pre_net_fd *e)
{
	int none = 0;

	if (atomic_compare_exchange_strong_explicit(&e->s.lat_stamps, &none, 1, memory_order_relaxed,
	                                            memory_order_relaxed)) {
		int one = 1, was = 0, saved = errno;
		socklen_t len = sizeof was;
		/* the program's own (2): its receives keep showing them */
		if (getsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &was, &len) == 0 && was)
			atomic_store_explicit(&e->s.lat_stamps, 2, memory_order_relaxed);
		else
			setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
		errno = saved;
	}
}

void rlt_pre_latency_hide_stamps(int fd, struct msghdr *m)
{
	struct rlt_pre_net_fd *e;

	if (!m || !m->msg_control || !m->msg_controllen || fd < 0 ||
	    (unsigned)fd >= rlt_pre_net_tab_n)
		return;
	e = &rlt_pre_net_tab[fd];
	if (atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_PRE_FD_SOCKET ||
	    atomic_load_explicit(&e->s.lat_stamps, memory_order_relaxed) != 1)
		return;
	char *base = m->msg_control, *end = base + m->msg_controllen;
	size_t kept = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c;) {
		struct cmsghdr *next = CMSG_NXTHDR(m, c);
		size_t sz = CMSG_ALIGN(c->cmsg_len);
		if ((size_t)(end - (char *)c) < sz)
			sz = (size_t)(end - (char *)c);
		/* the next one is found before this one moves over its place */
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) {
			memmove(base + kept, c, sz);
			kept += sz;
		}
		c = next;
	}
	m->msg_controllen = kept;
}

rlt_ns_t rlt_pre_latency_arrival(struct msghdr *m, rlt_ns_t now)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		struct timespec ts, wall;
		memcpy(&ts, CMSG_DATA(c), sizeof ts);
		clock_gettime(CLOCK_REALTIME, &wall);
		int64_t ago = ((int64_t)wall.tv_sec - ts.tv_sec) * (int64_t)RLT_NS_PER_SEC +
		              (wall.tv_nsec - ts.tv_nsec);
		if (ago > 0 && (rlt_ns_t)ago < now)
			return now - (rlt_ns_t)ago;
		return now;
	}
	return 0;
}

/* The arrival (CLOCK_MONOTONIC) of the data at the head of fd's queue, by a peek that asks
 * for its receive timestamp (rlt_pre_latency_stamps_on). Data that came before the timestamps
 * were on has none: it counts as come when it was first seen. 0: nothing waits; 1 (the
 * clock's first nanosecond, never a real arrival): the end of the stream or an error, which
 * the kernel answers at once. */
static rlt_ns_t head_arrival(int fd, struct rlt_pre_net_fd *e, struct rlt__peer *src)
{
	char byte, cbuf[CMSG_SPACE(sizeof(struct timespec))];
	struct sockaddr_storage ss;
	struct iovec iov = {&byte, 1};
	struct msghdr m = {.msg_name = &ss, .msg_namelen = sizeof ss, .msg_iov = &iov,
	                   .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	int saved = errno;

	rlt_pre_latency_stamps_on(fd, e);
	ssize_t n = rlt_pre_true_recvmsg(fd, &m, MSG_PEEK | MSG_DONTWAIT);
	int err = errno;
	errno = saved;
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
		return 0;
	if (n <= 0)
		return 1;
	rlt__peer_from_sockaddr(src, (struct sockaddr *)&ss, m.msg_namelen);
	rlt_ns_t now = rlt__now(), at = rlt_pre_latency_arrival(&m, now);
	if (at)
		return at;
	rlt_ns_t first = 0;
	atomic_compare_exchange_strong_explicit(&e->s.lat_unstamped, &first, now,
	                                        memory_order_relaxed, memory_order_relaxed);
	return atomic_load_explicit(&e->s.lat_unstamped, memory_order_relaxed);
}

/* When the data at the head of fd's queue reaches the program under latency c (0: nothing
 * waits; 1: now, the end of the stream). One draw per arrival: a look again at the same head
 * finds the same time. */
rlt_ns_t rlt_pre_latency_due(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c)
{
	struct rlt__peer src = {.af = 0};
	rlt_ns_t arrived = head_arrival(fd, e, &src);

	if (arrived <= 1)
		return arrived;
	if (!e->s.stream && !e->s.peer.af) {
		/* a datagram socket without a peer: the latency its datagram's source matches, if any
		 * (the conditions chosen for it: net_cond.c rlt__net_sock_choose) */
		uint32_t gen;
		const struct rlt__net_set *set = rlt__net_now(&gen);
		if (e->s.gen == gen &&
		    !(c = rlt__net_find_from(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN, &src)))
			return arrived;
	}
	if (arrived == atomic_load_explicit(&e->s.lat_arrived, memory_order_acquire))
		return atomic_load_explicit(&e->s.lat_due, memory_order_relaxed);
	rlt_ns_t due = e->s.stream ? rlt__net_latency_due(c, &e->s.rng, arrived,
	                                                  atomic_load_explicit(&e->s.lat_due,
	                                                                       memory_order_relaxed))
	                           : rlt__net_datagram_due(c, &e->s.rng, arrived);
	atomic_store_explicit(&e->s.lat_due, due, memory_order_relaxed);
	atomic_store_explicit(&e->s.lat_arrived, arrived, memory_order_release);
	return due;
}

int rlt_pre_latency_wait(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c, int flags,
                         ssize_t *ret)
{
	int nonblock = rlt_pre_net_nonblocking(fd, flags);

	for (;;) {
		rlt_ns_t due = rlt_pre_latency_due(fd, e, c), now = rlt__now();
		if (due && due <= now)
			return 1;
		if (nonblock) {
			if (!due)
				return 1; /* the kernel's EAGAIN */
			rlt_pre_fd_refused(fd, RLT_VAR_RECV);
			*ret = rlt_pre_fail(EAGAIN);
			return 0;
		}
		if (due) {
			rlt__sleep_until(due);
			return 1;
		}
		/* nothing yet: wait for it in the kernel, then for its time */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int saved = errno;
		if (real_ppoll(&p, 1, NULL, NULL) < 0 && errno != EINTR)
			return 1;
		errno = saved;
		if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
			return 1;
		if (!(p.revents & POLLIN))
			return 1; /* a signal: the kernel answers (it blocks again, as it would) */
	}
}
