/*
 * net_delay.c: a stream's latency as the program sees it (rlthrottle(7) NETWORK CONDITIONS):
 * its receives, splices and FIONREAD served from the socket's delay line (net_line.c), and the
 * waits' answer for it.
 *
 * Why here: the line, not the kernel, knows when data is due, so every receive and every wait
 * of the program on the socket goes through it. Each takes what the kernel holds first; a wait,
 * whenever the kernel reports the socket readable, takes that data and goes on until the line's
 * head is due or the caller's timeout. The end of the stream and an error (a reset) reach the
 * program after the data ahead of them, at their own due time. A receive or wait never sleeps
 * holding a line's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "clock.h"
#include "engine_lock.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "io_pacing.h"
#include "net.h"
#include "net_delay.h"
#include "net_hook.h"
#include "net_line.h"
#include "preload.h"
#include "ready.h"
#include "real.h"
#include "wait.h"

/* The caller's deadline from SO_RCVTIMEO (RLT_NS_NEVER: none). */
static rlt_ns_t rcv_deadline(int fd, rlt_ns_t now)
{
	struct timeval tv = {0};
	socklen_t len = sizeof tv;
	int saved = errno;

	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) != 0 || (!tv.tv_sec && !tv.tv_usec)) {
		errno = saved;
		return RLT_NS_NEVER;
	}
	return now + (rlt_ns_t)tv.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)tv.tv_usec * 1000;
}

/* The flags a line serves; others (MSG_OOB, MSG_TRUNC, MSG_ERRQUEUE) go to the kernel. */
#define SERVED (MSG_PEEK | MSG_WAITALL | MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_NOSIGNAL)

int rlt_pre_delay_recv(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       size_t off, size_t len, int flags, const struct rlt_pre_net_into *into,
                       ssize_t *ret)
{
	struct rlt_pre_line *l;

	if (!into || (flags & ~SERVED) || !(l = rlt_pre_line_get(fd, e, 1)))
		return 0;
	int peek = (flags & MSG_PEEK) != 0, nonblock = rlt_pre_net_nonblocking(fd, flags);
	int waitall = (flags & MSG_WAITALL) && !nonblock && !peek;
	rlt_ns_t deadline = 0;
	size_t got = 0;
	int use = fd; /* a duplicate once the call waits: the fd is not the socket (io_pacing.c) */

	if (into->msg) { /* what the library asked for (the stamps) is not the program's */
		into->msg->msg_controllen = 0;
		into->msg->msg_flags = 0;
		into->msg->msg_namelen = 0;
	}
	for (;;) {
		if (rlt_pre_line_lock(l) != 0) {
			*ret = got ? (ssize_t)got : rlt_pre_fail(EAGAIN);
			break;
		}
		rlt_ns_t now = rlt__now();
		l->no_take |= rlt_pre_line_unheld(fd);
		rlt_pre_line_take(use, l, e, c);
		if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end && !got) {
			rlt__lock_release(&l->lock);
			rlt_pre_line_put(l);
			return 0; /* nothing held, nothing to take: the kernel answers */
		}
		got += rlt_pre_line_give(l, now, into->iov, into->cnt, off + got, len - got, peek);
		int ended = rlt_pre_line_end_due(l, now), end = l->end;
		/* an error is told once, by the call that returns it (one that returns data first
		 * leaves it for the next); then the end, as the kernel does */
		if (ended && !peek && end > 0 && !got)
			l->end = -1;
		rlt_ns_t next = rlt_pre_line_next_due(l, now);
		int full = rlt_pre_line_room(l) == 0;
		rlt__lock_release(&l->lock);
		if (got == len || (got && !waitall)) {
			*ret = (ssize_t)got;
			break;
		}
		if (ended) {
			*ret = got ? (ssize_t)got : end > 0 ? rlt_pre_fail(end) : 0;
			break;
		}
		if (nonblock) {
			rlt_pre_fd_refused(fd, RLT_VAR_RECV);
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		if (!deadline)
			deadline = rcv_deadline(fd, now);
		if (use == fd) {
			int saved = errno, d = real_fcntl(fd, F_DUPFD_CLOEXEC, rlt_pre_pin_base());
			use = d >= 0 ? d : fd;
			errno = saved;
		}
		if (now >= deadline) {
			*ret = got ? (ssize_t)got : rlt_pre_fail(EAGAIN);
			break;
		}
		/* wait for the head's time, taking data as it comes while there is room */
		rlt_ns_t until = next < deadline ? next : deadline;
		struct timespec ts, *tp = NULL;
		if (until != RLT_NS_NEVER) {
			ts.tv_sec = (time_t)((until - now) / RLT_NS_PER_SEC);
			ts.tv_nsec = (long)((until - now) % RLT_NS_PER_SEC);
			tp = &ts;
		}
		struct pollfd p = {.fd = full ? -1 : use, .events = POLLIN | POLLRDHUP};
		if (real_ppoll(&p, 1, tp, NULL) < 0 && errno == EINTR) {
			*ret = got ? (ssize_t)got : -1; /* a signal: EINTR, as the kernel's */
			break;
		}
	}
	if (use != fd) {
		int saved = errno;
		real_close(use);
		errno = saved;
	}
	rlt_pre_line_put(l);
	return 1;
}

#define SPLICE_PIECE 16384 /* a splice from a line moves this much at most (callers loop) */

int rlt_pre_delay_splice(int fd, struct rlt_pre_net_fd *e, int out, size_t len, unsigned flags,
                         ssize_t *ret)
{
	struct rlt_pre_line *l = rlt_pre_line_get(fd, e, 0);
	char buf[SPLICE_PIECE];

	if (!l)
		return 0;
	for (int round = 0;; round++) {
		if (rlt_pre_line_lock(l) != 0) {
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		/* splice reads the kernel: the line must not take what it would read */
		l->no_take = 1;
		rlt_ns_t now = rlt__now();
		uint64_t avail = rlt_pre_line_due_end(l, now) - l->rd;
		size_t n = avail < len ? (size_t)avail : len;
		n = n < SPLICE_PIECE ? n : SPLICE_PIECE;
		int empty = l->rd == l->wr, at_end = rlt_pre_line_end_due(l, now), end = l->end;
		rlt_ns_t next = rlt_pre_line_next_due(l, now);
		if (n) { /* read now, taken off once written */
			struct iovec v = {buf, n};
			rlt_pre_line_give(l, now, &v, 1, 0, n, 1);
		}
		rlt__lock_release(&l->lock);
		if (empty && (!end || at_end)) {
			rlt_pre_line_put(l);
			if (at_end && end > 0)
				return (*ret = rlt_pre_fail(end)), 1; /* a reset held till due */
			return 0; /* nothing held: the kernel's */
		}
		if (n) {
			ssize_t w = real_write(out, buf, n);
			if (w > 0 && rlt_pre_line_lock(l) == 0) {
				rlt_pre_line_consume(l, (uint64_t)w);
				rlt__lock_release(&l->lock);
			}
			*ret = w;
			break;
		}
		if ((flags & SPLICE_F_NONBLOCK) || rlt_pre_net_nonblocking(fd, 0) || round > 1000) {
			rlt_pre_fd_refused(fd, RLT_VAR_RECV);
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		rlt__sleep_until(next); /* held, not due: a blocking splice waits for it */
	}
	rlt_pre_line_put(l);
	return 1;
}

int rlt_pre_delay_inq(struct rlt_pre_net_fd *e, int *n)
{
	struct rlt_pre_line *l = rlt_pre_line_ref(atomic_load(&e->line));

	if (!l)
		return 0;
	if (rlt_pre_line_lock(l) == 0) {
		uint64_t due = rlt_pre_line_due_end(l, rlt__now()) - l->rd;
		*n = due > INT32_MAX ? INT32_MAX : (int)due;
		rlt__lock_release(&l->lock);
	} else {
		*n = 0;
	}
	rlt_pre_line_put(l);
	return 1;
}

/* ----- the waits ----- */

/* Whether fd's receive budget (RLT_RECV) lets a receive go at now: a line's due data is
 * reported only then, or a non-blocking reader told "readable" would be refused by its budget
 * and told again at once. */
static int budget_allows(int fd, rlt_ns_t now)
{
	struct rlt_pre_fd *f = rlt_pre_fd_slot(fd);

	if (!f || atomic_load_explicit(&f->kind, memory_order_acquire) != RLT_FD_SOCKET ||
	    !f->mask[RLT_VAR_RECV])
		return 1;
	return rlt__ready_at(&rlt_pre_rules, RLT_VAR_RECV, f->mask[RLT_VAR_RECV],
	                     rlt_pre_budget_states(f), &f->peer, now) <= now;
}

int rlt_pre_delay_held(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       unsigned events, rlt_ns_t now, rlt_ns_t *due, unsigned *h)
{
	struct rlt_pre_line *l = rlt_pre_line_get(fd, e, 1);
	unsigned in = events & (RLT_PRE_IN_EVENTS | POLLRDHUP);

	if (!l)
		return 0;
	if (rlt_pre_line_lock(l) != 0) {
		rlt_pre_line_put(l);
		return 0;
	}
	l->no_take |= rlt_pre_line_unheld(fd);
	rlt_pre_line_take(fd, l, e, c);
	if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end) {
		rlt__lock_release(&l->lock);
		rlt_pre_line_put(l);
		return 0; /* not connected, or not ours to answer for: the kernel's readiness */
	}
	uint64_t end = rlt_pre_line_due_end(l, now);
	int ready = (end > l->rd || rlt_pre_line_end_due(l, now)) && budget_allows(fd, now) &&
	            !rlt_pre_net_in_hung(e, now);
	if (ready && (events & EPOLLET)) /* an edge: only what came due since the last told */
		ready = end > l->told || (rlt_pre_line_end_due(l, now) && !l->told_end);
	rlt_ns_t next = rlt_pre_line_next_due(l, now);
	int full = rlt_pre_line_room(l) == 0, err = l->end > 0 && !rlt_pre_line_end_due(l, now);
	rlt__lock_release(&l->lock);
	rlt_pre_line_put(l);
	*h = RLT_PRE_NET_OWN | in;
	if (ready) {
		*h |= RLT_PRE_NET_READY;
		*due = now;
		return 1;
	}
	if (next < *due)
		*due = next;
	if (err) /* a reset taken early: its hang-up and error are held whole till due */
		*h |= RLT_PRE_HELD_WHOLE | (events & RLT_PRE_OUT_EVENTS);
	else if (!full)
		*h |= RLT_PRE_NET_WATCH;
	return 1;
}

/* The receive events a socket with a line reports: its due data or end (the kernel's report
 * of them is data for the line: taken). `asked`: the events asked; `got`: the kernel's. -1:
 * not a socket with a line. */
static int line_revents(int fd, unsigned asked, unsigned got, rlt_ns_t now, int et_tell)
{
	struct rlt_pre_net_fd *e;
	const struct rlt__net_set *set;
	const struct rlt__net_cond *c;
	struct rlt_pre_line *l;
	const unsigned in_side = RLT_PRE_IN_EVENTS | POLLRDHUP | POLLHUP | POLLERR;

	if (fd < 0 || (unsigned)fd >= rlt_pre_net_tab_n)
		return -1;
	e = &rlt_pre_net_tab[fd];
	if (!atomic_load_explicit(&e->line, memory_order_acquire) ||
	    !(l = rlt_pre_line_ref(atomic_load(&e->line))))
		return -1;
	if (rlt_pre_line_lock(l) != 0) {
		rlt_pre_line_put(l);
		return (int)got;
	}
	if ((got & in_side) && (set = rlt_pre_net_conditions(e)) &&
	    (c = rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN)))
		rlt_pre_line_take(fd, l, e, c);
	if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end) {
		rlt__lock_release(&l->lock);
		rlt_pre_line_put(l);
		return -1; /* not connected, or not ours to answer for: the kernel's answer */
	}
	uint64_t end = rlt_pre_line_due_end(l, now);
	int at_end = rlt_pre_line_end_due(l, now);
	int ready = (end > l->rd || at_end) && budget_allows(fd, now) && !rlt_pre_net_in_hung(e, now);
	if (et_tell && ready) {
		l->told = end;
		l->told_end = at_end;
	}
	int err = l->end > 0 && !at_end;
	rlt__lock_release(&l->lock);
	rlt_pre_line_put(l);
	if (!(asked & RLT_PRE_IN_EVENTS))
		return (int)(err ? 0 : got);
	if (ready)
		return (int)(got | (asked & RLT_PRE_IN_EVENTS) | (at_end ? asked & POLLRDHUP : 0));
	return (int)(err ? 0 : got & ~in_side);
}

int rlt_pre_delay_polled(struct pollfd *fds, nfds_t n, int rc)
{
	rlt_ns_t now = rlt__now();
	int saved = errno, count = 0;

	if (rc < 0)
		return rc;
	for (nfds_t i = 0; i < n; i++) {
		int r = fds[i].fd < 0 ? -1
		                      : line_revents(fds[i].fd, (unsigned)fds[i].events,
		                                     (unsigned short)fds[i].revents, now, 0);
		if (r >= 0)
			fds[i].revents = (short)r;
		count += fds[i].revents != 0;
	}
	errno = saved;
	return count;
}

int rlt_pre_delay_selected(int nfds, fd_set *r, fd_set *w, fd_set *x, const fd_set *asked,
                           int rc)
{
	rlt_ns_t now = rlt__now();
	int saved = errno, count = 0;

	if (rc < 0)
		return rc;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		if (r && FD_ISSET(fd, asked)) {
			int v = line_revents(fd, POLLIN, FD_ISSET(fd, r) ? POLLIN : 0, now, 0);
			if (v >= 0 && (v & POLLIN))
				FD_SET(fd, r);
			else if (v >= 0)
				FD_CLR(fd, r);
		}
		count += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) + (x && FD_ISSET(fd, x));
	}
	errno = saved;
	return count;
}

unsigned rlt_pre_delay_round_add(struct rlt_pre_delay_round *r, int fd, uint32_t events,
                                 uint64_t data, unsigned h)
{
	if (!r) /* held as a wait holds it; the wait's own round answers for it */
		return h & ~RLT_PRE_NET_MARKS;
	if (r->n >= RLT_PRE_DELAY_ROUND_MAX) /* not watched: the kernel tells, the receive sorts */
		return h & ~(RLT_PRE_NET_MARKS | RLT_PRE_IN_EVENTS | POLLRDHUP);
	r->s[r->n].fd = fd;
	r->s[r->n].events = events;
	r->s[r->n].data = data;
	r->s[r->n++].h = h;
	return h & ~RLT_PRE_NET_MARKS;
}

/* The kernel's events of an epoll round: those of a socket with a line get the line's answer
 * (dropped when none is left); the count. */
static int epoll_filter(struct epoll_event *evs, int rc, struct rlt_pre_delay_round *r,
                        rlt_ns_t now)
{
	int k = 0;

	for (int i = 0; i < rc; i++) {
		unsigned j = 0;
		while (j < r->n && r->s[j].data != evs[i].data.u64)
			j++;
		if (j < r->n) {
			int v = line_revents(r->s[j].fd, r->s[j].events, evs[i].events, now,
			                     (r->s[j].events & EPOLLET) != 0);
			if (v >= 0)
				evs[i].events = (uint32_t)v;
		}
		if (evs[i].events)
			evs[k++] = evs[i];
	}
	return k;
}

int rlt_pre_delay_epoll(int epfd, struct epoll_event *evs, int max, rlt_ns_t until,
                        const sigset_t *sig, struct rlt_pre_delay_round *r)
{
	rlt_ns_t now = rlt__now();
	int placed = 0, rc;

	/* the due ones first, as the kernel would have them */
	for (unsigned j = 0; j < r->n && placed < max; j++) {
		if (!(r->s[j].h & RLT_PRE_NET_READY))
			continue;
		int v = line_revents(r->s[j].fd, r->s[j].events, 0, now,
		                     (r->s[j].events & EPOLLET) != 0);
		if (v > 0) {
			evs[placed].events = (uint32_t)v;
			evs[placed++].data.u64 = r->s[j].data;
		}
	}
	if (placed) {
		int saved = errno;
		rc = max > placed ? real_epoll_pwait(epfd, evs + placed, max - placed, 0, sig) : 0;
		rc = rc > 0 ? epoll_filter(evs + placed, rc, r, now) : 0;
		/* one entry per registration: the kernel's events of a placed one join it */
		int k = placed;
		for (int i = placed; i < placed + rc; i++) {
			int j = 0;
			while (j < placed && evs[j].data.u64 != evs[i].data.u64)
				j++;
			if (j < placed)
				evs[j].events |= evs[i].events;
			else
				evs[k++] = evs[i];
		}
		errno = saved;
		return k;
	}
	/* nothing due: wait on the instance and on the watched sockets, whose data the line
	 * takes as it comes */
	struct pollfd p[1 + RLT_PRE_DELAY_ROUND_MAX];
	unsigned np = 1;
	p[0] = (struct pollfd){.fd = epfd, .events = POLLIN};
	for (unsigned j = 0; j < r->n; j++)
		if (r->s[j].h & RLT_PRE_NET_WATCH)
			p[np++] = (struct pollfd){.fd = r->s[j].fd, .events = POLLIN | POLLRDHUP};
	struct timespec ts, *tp = NULL;
	if (until != RLT_NS_NEVER) {
		rlt_ns_t left = until > now ? until - now : 0;
		ts.tv_sec = (time_t)(left / RLT_NS_PER_SEC);
		ts.tv_nsec = (long)(left % RLT_NS_PER_SEC);
		tp = &ts;
	}
	rc = real_ppoll(p, np, tp, sig);
	if (rc <= 0)
		return rc;
	now = rlt__now();
	for (unsigned i = 1; i < np; i++)
		if (p[i].revents)
			line_revents(p[i].fd, POLLIN, (unsigned)p[i].revents, now, 0);
	if (!p[0].revents)
		return 0;
	rc = real_epoll_pwait(epfd, evs, max, 0, sig);
	return rc > 0 ? epoll_filter(evs, rc, r, now) : rc;
}
