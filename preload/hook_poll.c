/*
 * hook_poll.c: the waits (poll, ppoll, select, pselect, epoll_wait, epoll_pwait, epoll_pwait2)
 * report a throttled socket ready only when the call they announce may go without waiting for
 * its budget (src/ready.h), and return by the caller's timeout. Without this a wait reported
 * data the budget did not allow yet, and the receive that followed slept for the budget, past
 * the program's own deadline (curl --max-time: issue 17 row 14).
 *
 * How: the socket's event (POLLIN for a receive rule, POLLOUT for a send rule) is held back
 * until it is due (rlt_pre_fd_held); the real wait is made without it and with the timeout
 * cut to when it is due, then made again (a bounded loop; each round sleeps in the kernel, so
 * it never spins). A wait on nothing throttled makes the real call at once: its cost is a
 * look at each fd's entry (no system call, no lock). epoll, whose interest set is the
 * kernel's, is hook_epoll.c's.
 *
 * Both fronts: the preload's exported hooks below, and the system-call front's dispatch
 * (trap_dispatch.c), which calls the rlt_pre_* forms with the kernel's arguments.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>

#include "accept_queue.h"
#include "clock.h"
#include "fdtable.h"
#include "hook_connect.h"
#include "hook_poll.h"
#include "load.h"
#include "net_delay.h"
#include "net_hook.h"
#include "preload.h"
#include "ready.h"
#include "real.h"
#include "redis_client.h"

/* The held sockets of one poll or select call kept aside; more are not held. */
#define HELD_MAX 64

/* The variables whose rules can hold a socket back in a wait: a send or a receive, a
 * non-blocking connect or accept let go later, a listener under an accept rule. */
#define HOLDING_VARS                                                                      \
	((1u << RLT_VAR_SEND) | (1u << RLT_VAR_RECV) | (1u << RLT_VAR_CONNECT) |            \
	 (1u << RLT_VAR_ACCEPT))

int rlt_pre_holds_in_calls(void)
{
	return (rlt_pre_vars_in_use & ((1u << RLT_VAR_CONNECT) | (1u << RLT_VAR_ACCEPT))) ||
	       rlt_pre_net_on();
}

/* Whether any wait can hold a socket back: such a rule exists and applies now. */
int rlt_pre_wait_may_hold(void)
{
	return ((rlt_pre_vars_in_use & HOLDING_VARS) || rlt_pre_net_on()) &&
	       atomic_load_explicit(&rlt_pre_active, memory_order_acquire) && !rlt__internal;
}


unsigned rlt_pre_fd_held(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due)
{
	struct rlt_pre_fd *e;
	unsigned held = 0;
	rlt_ns_t t;

	if (!(events & (RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS)))
		return 0;
	/* RLT_NET's hang: nothing comes while it lasts */
	held = rlt_pre_net_held(fd, events, now, due);
	e = rlt_pre_fd_get(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET)
		return held;
	t = atomic_load_explicit(&e->until, memory_order_acquire);
	if (t > now) {
		/* a non-blocking connect or accept due later: its completion and its data */
		held |= (events & (RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS)) | RLT_PRE_HELD_WHOLE;
		*due = t < *due ? t : *due;
	} else if (t) {
		atomic_compare_exchange_strong(&e->until, &t, 0);
	}
	if ((events & RLT_PRE_IN_EVENTS) && e->listening && rlt_pre_rules.n[RLT_VAR_ACCEPT]) {
		t = rlt_pre_listener_due(e, now);
		if (t > now) {
			held |= events & RLT_PRE_IN_EVENTS;
			*due = t < *due ? t : *due;
		}
	}
	if ((events & RLT_PRE_IN_EVENTS) && e->mask[RLT_VAR_RECV]) {
		t = rlt__ready_at(&rlt_pre_rules, RLT_VAR_RECV, e->mask[RLT_VAR_RECV],
		                  rlt_pre_budget_states(e), &e->peer, now);
		if (t > now) {
			held |= events & RLT_PRE_IN_EVENTS;
			*due = t < *due ? t : *due;
		}
	}
	if ((events & RLT_PRE_OUT_EVENTS) && e->mask[RLT_VAR_SEND]) {
		t = rlt__ready_at(&rlt_pre_rules, RLT_VAR_SEND, e->mask[RLT_VAR_SEND],
		                  rlt_pre_budget_states(e), &e->peer, now);
		if (t > now) {
			held |= events & RLT_PRE_OUT_EVENTS;
			*due = t < *due ? t : *due;
		}
	}
	return held;
}

unsigned rlt_pre_fd_ready_own(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due)
{
	struct rlt_pre_fd *e;

	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed) ||
	    !(events & RLT_PRE_IN_EVENTS) || !(e = rlt_pre_fd_slot(fd)) ||
	    atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET || !e->listening)
		return 0;
	return rlt_pre_listener_queued(fd, e, now, due) ? events & RLT_PRE_IN_EVENTS : 0;
}

/* Whether fd is a socket whose events in `events` a rule may hold back: no clock read, no
 * system call (but the first look at a never-seen fd), so that a wait on nothing throttled
 * costs a look at each entry. */
int rlt_pre_wait_may_hold_fd(int fd, unsigned events)
{
	struct rlt_pre_fd *e;

	if (fd < 0 || !(events & (RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS)))
		return 0;
	e = rlt_pre_fd_get(fd);
	return (e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	        (((events & RLT_PRE_IN_EVENTS) &&
	          (e->mask[RLT_VAR_RECV] || (e->listening && rlt_pre_rules.n[RLT_VAR_ACCEPT]))) ||
	         ((events & RLT_PRE_OUT_EVENTS) && e->mask[RLT_VAR_SEND]) ||
	         atomic_load_explicit(&e->until, memory_order_relaxed))) ||
	       rlt_pre_net_may_hold(fd);
}

int rlt_pre_fd_holdable(int fd)
{
	return rlt_pre_wait_may_hold_fd(fd, RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS);
}

/* The caller's deadline from a relative timeout (NULL: none). */
rlt_ns_t rlt_pre_wait_deadline(const struct timespec *t, rlt_ns_t now)
{
	if (!t)
		return RLT_NS_NEVER;
	if (t->tv_sec < 0 || t->tv_nsec < 0)
		return now;
	if ((uint64_t)t->tv_sec > (RLT_NS_NEVER - now) / RLT_NS_PER_SEC / 2)
		return RLT_NS_NEVER;
	return now + (uint64_t)t->tv_sec * RLT_NS_PER_SEC + (uint64_t)t->tv_nsec;
}

/* The timeout of one round: until the deadline or what is due, whichever comes first. */
static struct timespec *round_timeout(struct timespec *ts, rlt_ns_t deadline, rlt_ns_t due,
                                      rlt_ns_t now)
{
	rlt_ns_t until = due < deadline ? due : deadline;

	if (until == RLT_NS_NEVER)
		return NULL;
	until = until > now ? until - now : 0;
	ts->tv_sec = (time_t)(until / RLT_NS_PER_SEC);
	ts->tv_nsec = (long)(until % RLT_NS_PER_SEC);
	return ts;
}

/* ----- poll, ppoll ----- */

/* A socket whose readable side a delay line answers for (net_delay.h): a watched one keeps
 * its receive events asked (the kernel's report is data for the line, taken after the wait),
 * a due one is reported at once (its due time is now); *lines: the wait has such sockets. */
static unsigned delay_line_poll(unsigned h, int *lines)
{
	*lines = 1;
	if (h & (RLT_PRE_NET_WATCH | RLT_PRE_NET_READY))
		h &= ~(unsigned)(RLT_PRE_IN_EVENTS | POLLRDHUP);
	return h & ~RLT_PRE_NET_MARKS;
}

/* What poll reports of its own after the real call (rlt_pre_fd_ready_own): the count rc
 * returned, with the fds it adds. */
static int poll_own(struct pollfd *fds, nfds_t n, int rc)
{
	rlt_ns_t now = rlt__now(), due = RLT_NS_NEVER;

	for (nfds_t i = 0; i < n && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed); i++) {
		unsigned o = fds[i].fd < 0 ? 0
		                           : rlt_pre_fd_ready_own(fds[i].fd, (unsigned)fds[i].events,
		                                                  now, &due);
		if (o) {
			rc += fds[i].revents == 0;
			fds[i].revents |= (short)o;
		}
	}
	return rc;
}

int rlt_pre_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *sig)
{
	struct {
		nfds_t i;
		short held;
		int fd;           /* >= 0: taken out of the array whole (RLT_PRE_HELD_WHOLE) */
	} aside[HELD_MAX];
	rlt_ns_t now, deadline;

	nfds_t i = 0;

	if (rlt_pre_wait_may_hold())
		while (i < n && !rlt_pre_wait_may_hold_fd(fds[i].fd, (unsigned)fds[i].events))
			i++;
	if (i == n)
		return real_ppoll(fds, n, tmo, sig);
	now = rlt__now();
	deadline = rlt_pre_wait_deadline(tmo, now);
	for (int round = 0; round < RLT_PRE_WAIT_ROUNDS; round++) {
		rlt_ns_t due = RLT_NS_NEVER;
		unsigned k = 0;
		struct timespec ts;
		int rc, lines = 0;

		for (i = 0; i < n && k < HELD_MAX; i++) {
			unsigned h = fds[i].fd < 0 ? 0
			                           : rlt_pre_fd_held(fds[i].fd, (unsigned)fds[i].events,
			                                             now, &due);
			if (h & RLT_PRE_NET_OWN)
				h = delay_line_poll(h, &lines);
			if (h) {
				aside[k].i = i;
				aside[k].held = (short)(h & ~RLT_PRE_HELD_WHOLE);
				aside[k++].fd = (h & RLT_PRE_HELD_WHOLE) ? fds[i].fd : -1;
				fds[i].events &= (short)~h;
				if (h & RLT_PRE_HELD_WHOLE)
					fds[i].fd = -1; /* poll skips it: no POLLERR or POLLHUP */
			}
		}
		int own = 0;
		for (i = 0; i < n && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed); i++)
			own |= fds[i].fd >= 0 &&
			       rlt_pre_fd_ready_own(fds[i].fd, (unsigned)fds[i].events, now, &due);
		/* (a queued connection due now lowers no due: own says it) */
		if (k == 0 && due == RLT_NS_NEVER && !own && !lines)
			return real_ppoll(fds, n, round_timeout(&ts, deadline, RLT_NS_NEVER, now), sig);
		rc = real_ppoll(fds, n, round_timeout(&ts, deadline, own ? now : due, now), sig);
		int err = errno;
		for (unsigned j = 0; j < k; j++) {
			fds[aside[j].i].events |= aside[j].held;
			if (aside[j].fd >= 0)
				fds[aside[j].i].fd = aside[j].fd;
		}
		if (lines) /* the delay lines' answer for their sockets (net_delay.h) */
			rc = rlt_pre_delay_polled(fds, n, rc);
		if (rc >= 0)
			rc = poll_own(fds, n, rc);
		errno = err;
		/* an answer, or the caller's time is up (rc 0) */
		if (rc != 0 || (now = rlt__now()) >= deadline)
			return rc;
	}
	return 0;
}

int rlt_pre_poll(struct pollfd *fds, nfds_t n, int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	return rlt_pre_ppoll(fds, n, ms < 0 ? NULL : &ts, NULL);
}

/* ----- select, pselect ----- */

int rlt_pre_pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *tmo,
                    const sigset_t *sig)
{
	fd_set in_r, in_w;
	rlt_ns_t now, deadline;
	int top = nfds > FD_SETSIZE ? FD_SETSIZE : nfds;

	int fd = top;

	if (rlt_pre_wait_may_hold() && (r || w))
		for (fd = 0; fd < top && !rlt_pre_wait_may_hold_fd(fd, (r && FD_ISSET(fd, r) ? POLLIN : 0) |
		                                             (w && FD_ISSET(fd, w) ? POLLOUT : 0));)
			fd++;
	if (fd >= top)
		return real_pselect(nfds, r, w, x, tmo, sig);
	/* what the program asked for: each round starts from it, as select writes the sets */
	FD_ZERO(&in_r);
	FD_ZERO(&in_w);
	fd_set in_x;
	FD_ZERO(&in_x);
	for (fd = 0; fd < top; fd++) {
		if (r && FD_ISSET(fd, r))
			FD_SET(fd, &in_r);
		if (w && FD_ISSET(fd, w))
			FD_SET(fd, &in_w);
		if (x && FD_ISSET(fd, x))
			FD_SET(fd, &in_x);
	}
	now = rlt__now();
	deadline = rlt_pre_wait_deadline(tmo, now);
	for (int round = 0; round < RLT_PRE_WAIT_ROUNDS; round++) {
		rlt_ns_t due = RLT_NS_NEVER;
		struct timespec ts;
		int held = 0, rc, lines = 0;

		for (fd = 0; fd < top; fd++) {
			unsigned ev = (FD_ISSET(fd, &in_r) ? POLLIN : 0) |
			              (FD_ISSET(fd, &in_w) ? POLLOUT : 0);
			unsigned h = ev ? rlt_pre_fd_held(fd, ev, now, &due) : 0;
			if (h & RLT_PRE_NET_OWN)
				h = delay_line_poll(h, &lines);
			if (r && FD_ISSET(fd, &in_r) && !(h & POLLIN))
				FD_SET(fd, r);
			else if (r)
				FD_CLR(fd, r);
			if (w && FD_ISSET(fd, &in_w) && !(h & POLLOUT))
				FD_SET(fd, w);
			else if (w)
				FD_CLR(fd, w);
			if (x && FD_ISSET(fd, &in_x))
				FD_SET(fd, x);
			held |= h != 0;
		}
		int own = 0;
		for (fd = 0; fd < top && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed); fd++)
			own |= FD_ISSET(fd, &in_r) && rlt_pre_fd_ready_own(fd, POLLIN, now, &due);
		if (!held && due == RLT_NS_NEVER && !own && !lines)
			return real_pselect(nfds, r, w, x, round_timeout(&ts, deadline, RLT_NS_NEVER, now),
			                    sig);
		rc = real_pselect(nfds, r, w, x, round_timeout(&ts, deadline, own ? now : due, now), sig);
		if (lines) /* the delay lines' answer for their sockets (net_delay.h) */
			rc = rlt_pre_delay_selected(top, r, w, x, &in_r, rc);
		if (rc >= 0 && r) {
			/* what select reports of its own (rlt_pre_fd_ready_own) */
			rlt_ns_t at = rlt__now(), later = RLT_NS_NEVER;
			for (fd = 0; fd < top && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed); fd++)
				if (FD_ISSET(fd, &in_r) && !FD_ISSET(fd, r) &&
				    rlt_pre_fd_ready_own(fd, POLLIN, at, &later)) {
					FD_SET(fd, r);
					rc++;
				}
		}
		/* an answer, or the caller's time is up (rc 0) */
		if (rc != 0 || (now = rlt__now()) >= deadline)
			return rc;
	}
	return 0;
}

int rlt_pre_select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv)
{
	struct timespec ts;
	rlt_ns_t start = 0;
	int rc;

	if (tv) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0)
			return rlt_pre_fail(EINVAL);
		ts.tv_sec = tv->tv_sec + tv->tv_usec / 1000000;
		ts.tv_nsec = (long)(tv->tv_usec % 1000000) * 1000;
		start = rlt__now();
	}
	rc = rlt_pre_pselect(nfds, r, w, x, tv ? &ts : NULL, NULL);
	if (tv) {
		/* Linux's select leaves the time not slept in *tv */
		int err = errno;
		rlt_ns_t asked = (uint64_t)ts.tv_sec * RLT_NS_PER_SEC + (uint64_t)ts.tv_nsec;
		rlt_ns_t spent = rlt__now() - start;
		rlt_ns_t left = spent < asked ? asked - spent : 0;
		tv->tv_sec = (time_t)(left / RLT_NS_PER_SEC);
		tv->tv_usec = (suseconds_t)(left % RLT_NS_PER_SEC / 1000);
		errno = err;
	}
	return rc;
}

/* ----- the hooks ----- */

/* poll and ppoll in both builds: the freestanding one's own calls (the Redis client) come
 * here too, and pass (rlt__internal, or nothing throttled). */
RLT_EXPORT int poll(struct pollfd *fds, nfds_t n, int ms)
{
	rlt_pre_ensure_real();
	return rlt_pre_poll(fds, n, ms);
}

RLT_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *s)
{
	rlt_pre_ensure_real();
	return rlt_pre_ppoll(fds, n, t, s);
}

#ifndef RLT_NOLIBC
/* fortify's forms (_FORTIFY_SOURCE): the C library's headers do not declare them */
int __poll_chk(struct pollfd *fds, nfds_t n, int ms, size_t len);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *s,
                size_t len);

RLT_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int ms, size_t len)
{
	(void)len;
	return poll(fds, n, ms);
}

RLT_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
                           const sigset_t *s, size_t len)
{
	(void)len;
	return ppoll(fds, n, t, s);
}

RLT_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv)
{
	rlt_pre_ensure_real();
	return rlt_pre_select(nfds, r, w, x, tv);
}

RLT_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *t,
                       const sigset_t *s)
{
	rlt_pre_ensure_real();
	return rlt_pre_pselect(nfds, r, w, x, t, s);
}
#endif
