/*
 * hook_connect.c: connect (RLT_CONNECT, RLT_CONNS) and accept (RLT_ACCEPT, RLT_CONNS).
 *
 * connect is charged before it is made: the attempt is what the rule counts, and a refused
 * attempt is still an attempt. A connect() that only asks how an attempt went (a client that
 * connects without blocking and calls connect() again to learn the outcome) is not one.
 *
 * accept is charged after the kernel hands over a connection: a charge taken before a blocking
 * accept would let every thread parked in accept() go at once when a crowd arrives, past the
 * rate.
 *
 * Neither sleeps on a non-blocking socket (rlthrottle(7) THROTTLED CALLS). A non-blocking
 * connect starts its attempt at once and the socket is held (struct rlt_pre_fd until): the
 * waits report its completion, and its data, when the charge is due, as a slower network
 * would. A non-blocking accept first asks the rules every connection of the listener meets
 * (rlt__match_accept_sure): when they are short it fails with EAGAIN, the connection left in
 * the kernel's queue and the listener's readiness held until they allow one (hook_poll.c).
 * The rules that depend on who connects (peer=, key=peer) can only be asked once the
 * connection is taken: one they do not allow yet waits in a queue of ours (accept_queue.c)
 * and the accept goes on to the next, so a client allowed now is not kept behind it. Nothing
 * is booked ahead (a crowd from one client would book its key seconds ahead), and the
 * program sees the connection only when it is handed over, so a read right after the accept
 * (Go's) cannot come early. A blocking accept waits for them, as before.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "accept_queue.h"
#include "charge.h"
#include "clock.h"
#include "connect_attempt.h"
#include "conns.h"
#include "fdtable.h"
#include "hook_connect.h"
#include "hook_poll.h"
#include "load.h"
#include "preload.h"
#include "ready.h"
#include "real.h"
#include "redis_client.h"
#include "rule_set.h"
#include "shm_set.h"

static int stream_socket(struct rlt_pre_fd *e)
{
	return e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	       e->type == SOCK_STREAM;
}

int rlt_pre_attempt_begin(int fd, struct rlt_pre_fd *e, const struct rlt__peer *peer,
                          int nonblock, struct rlt_pre_attempt *a)
{
	uint32_t cmask, nmask;
	int err;

	int seen = e->peer.af != 0; /* a connect() went before on this socket */
	rlt_pre_fd_set_peer(fd, peer);
	a->peer = *peer;
	a->charged = 0;
	a->until = 0;
	cmask = e->mask[RLT_VAR_CONNECT];
	nmask = e->mask[RLT_VAR_CONNS];
	rlt__connect_counts(fd, e->type, seen, e->conn && e->conn->conns_mask, &cmask, &nmask);
	a->nmask = nmask;
	if (cmask) {
		void *st = rlt_pre_budget_states(e);
		int rc = nonblock ? rlt__charge_peer(&rlt_pre_rules, &a->t, RLT_VAR_CONNECT, cmask, st,
		                                     peer, 0, 1)
		                  : rlt__charge_wait_peer(&rlt_pre_rules, &a->t, RLT_VAR_CONNECT,
		                                          cmask, st, peer, 0, 1);
		if (rc != 0) {
			rlt_pre_log(RLT_LOG_DEBUG, "connect on fd %d rejected", fd);
			return rlt_pre_fail(a->t.err);
		}
		a->charged = 1;
		if (nonblock && a->t.go > a->t.start) {
			/* held before the attempt starts: its completion must not reach a
			 * thread already asleep in a wait on it (Go registers, then connects) */
			a->until = a->t.go;
			atomic_store_explicit(&e->until, a->until, memory_order_release);
			rlt_pre_fd_hold_whole(fd);
		}
	}
	if (nmask && rlt__conns_acquire_peer(&rlt_pre_rules, nmask, peer, &err) != 0) {
		if (a->charged)
			rlt__settle(&rlt_pre_rules, &a->t, 0, 0);
		return rlt_pre_fail(err);
	}
	return 0;
}

void rlt_pre_attempt_end(int fd, struct rlt_pre_fd *e, struct rlt_pre_attempt *a, int rc,
                         int err)
{
	if (a->charged)
		rlt__settle(&rlt_pre_rules, &a->t, 0, 1);
	enum rlt__connect_outcome how = rlt__connect_outcome(rc, err);
	if (a->until && how != RLT_CONNECT_GOING)
		atomic_store_explicit(&e->until, 0, memory_order_release); /* the next wait puts
		                                                            its events back */
	if (a->nmask) {
		struct rlt_pre_sock_budgets *c = how == RLT_CONNECT_GOING ? rlt_pre_fd_budgets(e) : NULL;
		if (c)
			rlt_pre_fd_conns_hold(fd, c, a->nmask, &a->peer); /* released with its last fd */
		else
			rlt__conns_release_peer(&rlt_pre_rules, a->nmask, &a->peer);
	}
	if (e->type == SOCK_STREAM && how == RLT_CONNECT_FAILED) {
		/* The next connect() starts another attempt: said without a system call, and true
		 * on kernels that do not tell (see rlt__connect_starts). */
		struct rlt__peer none = {.af = 0};
		rlt_pre_fd_set_peer(fd, &none);
	}
	errno = err;
}

static RLT_SLOW int connect_slow(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct rlt_pre_attempt a;
	struct rlt_pre_fd *e;
	struct rlt__peer peer;
	int rc;

	rlt_pre_ensure_real();
	if (!atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal)
		return real_connect(fd, addr, len);
	e = rlt_pre_fd_get(fd);
	if (!e || atomic_load(&e->kind) != RLT_FD_SOCKET)
		return real_connect(fd, addr, len);

	rlt__peer_from_sockaddr(&peer, addr, len);
	if (peer.af == 0) {
		/* AF_UNSPEC dissolves a datagram socket's association */
		if (addr && len >= sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC)
			rlt_pre_fd_set_peer(fd, &peer);
		return real_connect(fd, addr, len);
	}
	if (rlt_pre_attempt_begin(fd, e, &peer, e->nonblock, &a) != 0)
		return -1;
	rc = real_connect(fd, addr, len);
	rlt_pre_attempt_end(fd, e, &a, rc, errno);
	return rc;
}

struct rlt_pre_fd *rlt_pre_fastopen_socket(int fd, int flags, const struct sockaddr *to,
                                           socklen_t tolen)
{
	struct rlt_pre_fd *e;

	if (!atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal)
		return NULL;
	e = rlt_pre_fd_get(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET ||
	    !rlt__connect_by_send(e->type, flags, to, tolen, e->peer.af != 0))
		return NULL;
	return e;
}

/* A connect changes which rules apply to the socket's traffic, so only a process with no rule
 * at all lets it straight through at the gate. */
RLT_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	if (rlt_pre_idle(RLT_PASS_ALL))
		return real_connect(fd, addr, len);
	return connect_slow(fd, addr, len);
}

/* A listener learns its port once, at its first accept: accept rules filter on it. */
static void learn_listener(int lfd, struct rlt_pre_fd *l)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof me;
	struct rlt__peer local;

	if (l->listening)
		return;
	if (getsockname(lfd, (struct sockaddr *)&me, &ml) == 0) {
		rlt__peer_from_sockaddr(&local, (struct sockaddr *)&me, ml);
		l->local_port = local.port;
	}
	l->listening = 1;
}

rlt_ns_t rlt_pre_listener_due(struct rlt_pre_fd *l, rlt_ns_t now)
{
	uint32_t sure = rlt__match_accept_sure(&rlt_pre_rules, l->af, l->local_port);
	struct rlt__peer kp = {.af = l->af, .port = l->local_port};
	rlt_ns_t t = sure ? rlt__ready_at(&rlt_pre_rules, RLT_VAR_ACCEPT, sure, NULL, &kp, now) : now;

	/* a full queue takes no more until one of its connections is handed over */
	if (atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed) >=
	    RLT_PRE_ACCEPTQ_MAX) {
		rlt_ns_t q = rlt_pre_acceptq_first_due();
		t = q != RLT_NS_NEVER && q > t ? q : t;
	}
	return t;
}

int rlt_pre_listener_queued(int lfd, struct rlt_pre_fd *l, rlt_ns_t now, rlt_ns_t *due)
{
	/* a wait on a connection of ours is the throttle's own wait: it follows a set as a
	 * delayed call does (within RLT_SET_SLICE_NS), and the queue is timed again under it */
	if (rlt_pre_rules.pub && rlt__ctl_pending(&rlt_pre_rules))
		rlt__ctl_serve(&rlt_pre_rules);
	if (rlt_pre_rules.nshared)
		rlt__shm_follow_all(&rlt_pre_rules);
	rlt_ns_t q = rlt_pre_acceptq_due(lfd);

	if (q == RLT_NS_NEVER)
		return 0;
	rlt_ns_t s = rlt_pre_listener_due(l, now);
	rlt_ns_t t = q > s ? q : s;
	if (t <= now)
		return 1;
	if ((rlt_pre_rules.pub || rlt_pre_rules.nshared) && t - now > RLT_SET_SLICE_NS)
		t = now + RLT_SET_SLICE_NS;
	*due = t < *due ? t : *due;
	return 0;
}

/* The charge of a connection accept() has just returned as fd `nfd` from listener `lfd`:
 * 0 to hand it to the program, or -1 (connection closed, errno set) when a rule sheds it.
 * With `later` (a queued connection handed over) the charge is not waited for: when another
 * thread or process took the budget first, nothing is taken, *later is when to look again,
 * and 1 is returned. */
static int admit(int lfd, int nfd, const struct sockaddr *addr, socklen_t *alen, rlt_ns_t *later)
{
	struct rlt_pre_fd *l = rlt_pre_fd_slot(lfd), *e;
	struct rlt__peer peer;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	struct rlt__ticket t;
	int err;

	if (!stream_socket(l)) {
		rlt_pre_fd_forget(nfd);
		return 0;
	}
	if (addr && alen && *alen <= sizeof ss) {
		rlt__peer_from_sockaddr(&peer, addr, *alen);
	} else if (getpeername(nfd, (struct sockaddr *)&ss, &sl) == 0) {
		rlt__peer_from_sockaddr(&peer, (struct sockaddr *)&ss, sl);
	} else {
		peer = (struct rlt__peer){.af = l->af};
	}
	learn_listener(lfd, l);
	rlt_pre_fd_new_socket(nfd, l->af, SOCK_STREAM, 0);
	rlt_pre_fd_set_peer(nfd, &peer);
	e = rlt_pre_fd_slot(nfd);
	if (!e)
		return 0;
	uint32_t amask = rlt__match_accept(&rlt_pre_rules, &peer, l->local_port);
	uint32_t nmask = e->mask[RLT_VAR_CONNS];
	/* key=port of an accepted connection is the local, listening port (rlthrottle(7) RULES) */
	struct rlt__peer kp = peer;
	kp.port = l->local_port;

	if (amask) {
		void *st = rlt_pre_budget_states(e);
		if ((later ? rlt__charge_peer(&rlt_pre_rules, &t, RLT_VAR_ACCEPT, amask, st, &kp, 0, 1)
		           : rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_ACCEPT, amask, st, &kp,
		                                   0, 1)) != 0) {
			err = t.err;
			goto shed;
		}
		if (later && t.go > t.start) {
			rlt__settle(&rlt_pre_rules, &t, 0, 0); /* not taken: it goes back */
			*later = t.go;
			rlt_pre_fd_forget(nfd);
			return 1;
		}
		rlt__settle(&rlt_pre_rules, &t, 0, 1);
	}
	if (nmask) {
		if (rlt__conns_acquire_peer(&rlt_pre_rules, nmask, &kp, &err) != 0)
			goto shed;
		struct rlt_pre_sock_budgets *c = rlt_pre_fd_budgets(e);
		if (c)
			rlt_pre_fd_conns_hold(nfd, c, nmask, &kp);
		else
			rlt__conns_release_peer(&rlt_pre_rules, nmask, &kp);
	}
	return 0;
shed:
	/* as an overloaded server sheds load: the connection is taken off the queue and closed */
	rlt_pre_log(RLT_LOG_DEBUG, "accept on fd %d: connection shed", lfd);
	rlt_pre_fd_forget(nfd);
	real_close(nfd);
	errno = err;
	return -1;
}

/* A non-blocking accept the rules every connection of the listener meets do not allow now:
 * EAGAIN, the connection left in the kernel's queue, the listener's registrations held until
 * the rules allow one (nothing charged). */
static int accept_refused(int fd)
{
	struct rlt_pre_fd *l;

	if (!atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal ||
	    !(rlt_pre_vars_in_use & (1u << RLT_VAR_ACCEPT)))
		return 0;
	l = rlt_pre_fd_get(fd);
	if (!stream_socket(l))
		return 0;
	if (!l->nonblock || atomic_load_explicit(&l->unheld, memory_order_relaxed))
		return 0;
	learn_listener(fd, l);
	rlt_ns_t now = rlt__now();
	if (rlt_pre_listener_due(l, now) <= now)
		return 0;
	rlt_pre_fd_refused(fd, RLT_VAR_ACCEPT);
	return 1;
}

/* The program's accept4 flags on a connection we accepted with others (a queued one). */
static void take_flags(int nfd, int nonblock_was, int flags)
{
	real_fcntl(nfd, F_SETFD, (flags & SOCK_CLOEXEC) ? FD_CLOEXEC : 0);
	if (!(flags & SOCK_NONBLOCK) != !nonblock_was) {
		int fl = real_fcntl(nfd, F_GETFL);
		if (fl >= 0)
			real_fcntl(nfd, F_SETFL, (flags & SOCK_NONBLOCK) ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
	}
}

/* Gives the program connection q (taken from the queue when `queued`: accepted with other flags
 * than the program's): its fd, or -1 (errno set) when a rule sheds it. With `later`, the charge
 * is not waited for: -2 when another thread or process took the budget first (*later: when
 * to look again). */
static int hand_over(int lfd, struct rlt_pre_queued *q, int queued, struct sockaddr *addr,
                     socklen_t *len, int flags, rlt_ns_t *later)
{
	int saved = errno;
	int rc = admit(lfd, q->fd, (struct sockaddr *)&q->addr, &q->alen, later);

	if (rc != 0)
		return rc == 1 ? -2 : -1;
	if (queued)
		take_flags(q->fd, q->nonblock, flags);
	if (addr && len) {
		memcpy(addr, &q->addr, *len < q->alen ? *len : q->alen);
		*len = q->alen;
	}
	struct rlt_pre_fd *e = rlt_pre_fd_slot(q->fd);
	if (e)
		e->nonblock = (flags & SOCK_NONBLOCK) != 0;
	errno = saved;
	return q->fd;
}

/* Whether a non-blocking accept on l may queue: a client-dependent accept rule exists, and the
 * waits can report the listener when a queued connection is due (a registration they keep:
 * one-shot too, never one beyond their table). */
static int queues(struct rlt_pre_fd *l)
{
	return l->nonblock &&
	       atomic_load_explicit(&l->unheld, memory_order_relaxed) != RLT_PRE_UNHELD &&
	       rlt__accept_by_client(&rlt_pre_rules);
}

/* A non-blocking accept under client-dependent rules: a queued connection now due, else the
 * kernel's connections in turn, each one the rules do not allow yet queued, until one is
 * allowed, the kernel has none (EAGAIN) or the queue is full (EAGAIN, the listener held). */
static int accept_queued(int lfd, struct rlt_pre_fd *l, struct sockaddr *addr, socklen_t *len,
                         int flags)
{
	struct rlt_pre_queued q;
	rlt_ns_t now = rlt__now();

	learn_listener(lfd, l);
	/* bounded: a connection that goes back (another thread took its budget) is not due
	 * again by `now` */
	while (rlt_pre_acceptq_take(lfd, now, &q)) {
		rlt_ns_t later;
		int nfd = hand_over(lfd, &q, 1, addr, len, flags, &later);
		if (nfd == -2) {
			q.due = later;
			if (rlt_pre_acceptq_put(lfd, &q) == 0)
				continue;
			nfd = hand_over(lfd, &q, 1, addr, len, flags, NULL);
		}
		if (nfd >= 0)
			return nfd; /* else shed (closed): the next */
	}
	/* A full queue holds the listener (EAGAIN) until one is due; a one-shot registration
	 * cannot be held (the kernel would report it again at once, a spin), so there the
	 * kernel's next connection waits its time, as a blocking accept's (the put below fails). */
	int hold_full = atomic_load_explicit(&l->unheld, memory_order_relaxed) == 0;
	for (int k = 0; k <= RLT_PRE_ACCEPTQ_MAX; k++) {
		if (hold_full && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed) >=
		                         RLT_PRE_ACCEPTQ_MAX)
			break;
		q.alen = sizeof q.addr;
		int nfd = real_accept4(lfd, (struct sockaddr *)&q.addr, &q.alen, flags);
		if (nfd < 0)
			return -1;
		struct rlt__peer peer;
		rlt__peer_from_sockaddr(&peer, (struct sockaddr *)&q.addr, q.alen);
		if (peer.af == 0)
			peer.af = l->af;
		q.amask = rlt__match_accept(&rlt_pre_rules, &peer, l->local_port);
		q.kp = peer;
		q.kp.port = l->local_port; /* as admit's */
		q.due = rlt_pre_acceptq_timed(&q, now);
		q.seq = 0;
		q.fd = nfd;
		if (q.due <= now) {
			rlt_ns_t later;
			int r = hand_over(lfd, &q, 0, addr, len, flags, &later);
			if (r != -2)
				return r;
			/* another thread took its key's budget since: it waits as the rest do,
			 * the accept does not sleep */
			q.due = later;
		}
		q.nonblock = (flags & SOCK_NONBLOCK) != 0;
		/* it must not reach a program this one execs */
		if (!(flags & SOCK_CLOEXEC))
			real_fcntl(nfd, F_SETFD, FD_CLOEXEC);
		if (rlt_pre_acceptq_put(lfd, &q) != 0) {
			/* another thread filled the queue meanwhile: waited for, as a blocking one */
			return hand_over(lfd, &q, 1, addr, len, flags, NULL);
		}
		rlt_pre_log(RLT_LOG_DEBUG, "accept on fd %d: connection queued for %llu us", lfd,
		            (unsigned long long)((q.due - now) / 1000));
	}
	rlt_pre_fd_refused(lfd, RLT_VAR_ACCEPT);
	return rlt_pre_fail(EAGAIN);
}

/* A listener that no longer queues (made blocking, or registered in epoll beyond its table) whose
 * connections still wait in our queue: they are its backlog, handed over first, and a
 * blocking accept waits for the first of them or the kernel's next, whichever comes first
 * (else it slept in the kernel while they waited: forever when no client came). -2: none
 * due (the kernel's accept then, as before). */
static int accept_leftover(int lfd, struct rlt_pre_fd *l, struct sockaddr *addr, socklen_t *len,
                           int flags)
{
	/* bounded: each round sleeps in the kernel until the first is due */
	for (int round = 0; round < RLT_PRE_WAIT_ROUNDS; round++) {
		struct rlt_pre_queued q;
		rlt_ns_t now = rlt__now();
		while (rlt_pre_acceptq_take(lfd, now, &q)) {
			int nfd = hand_over(lfd, &q, 1, addr, len, flags, NULL);
			if (nfd >= 0)
				return nfd; /* else shed (closed): the next */
		}
		rlt_ns_t due = rlt_pre_acceptq_due(lfd);
		if (due == RLT_NS_NEVER || l->nonblock)
			return -2;
		struct pollfd p = {lfd, POLLIN, 0};
		rlt_ns_t d = due > now ? due - now : 0;
		struct timespec ts = {(time_t)(d / RLT_NS_PER_SEC), (long)(d % RLT_NS_PER_SEC)};
		int rc = real_ppoll(&p, 1, &ts, NULL);
		if (rc > 0 || (rc < 0 && errno != EINTR))
			return -2;
		if (rc < 0)
			return -1; /* a signal: EINTR, as the kernel's accept */
	}
	return -2;
}

static RLT_SLOW int accept_common(int fd, struct sockaddr *addr, socklen_t *len, int flags,
                                  int four)
{
	rlt_pre_ensure_real();
	if (accept_refused(fd))
		return rlt_pre_fail(EAGAIN);
	if (atomic_load_explicit(&rlt_pre_active, memory_order_acquire) && !rlt__internal &&
	    (rlt_pre_vars_in_use & (1u << RLT_VAR_ACCEPT))) {
		struct rlt_pre_fd *l = rlt_pre_fd_get(fd);
		if (stream_socket(l) && queues(l))
			return accept_queued(fd, l, addr, len, four ? flags : 0);
		if (stream_socket(l) && rlt_pre_acceptq_due(fd) != RLT_NS_NEVER) {
			int nfd = accept_leftover(fd, l, addr, len, four ? flags : 0);
			if (nfd != -2)
				return nfd;
		}
	}
	int nfd = four ? real_accept4(fd, addr, len, flags) : real_accept(fd, addr, len);
	if (nfd < 0 || !atomic_load_explicit(&rlt_pre_active, memory_order_acquire))
		return nfd;
	if (!(rlt_pre_vars_in_use & ((1u << RLT_VAR_ACCEPT) | (1u << RLT_VAR_CONNS) |
	                             (1u << RLT_VAR_SEND) | (1u << RLT_VAR_RECV)))) {
		rlt_pre_fd_forget(nfd);
		return nfd;
	}
	int saved = errno;
	if (admit(fd, nfd, addr, len, NULL) != 0)
		return -1;
	struct rlt_pre_fd *e = rlt_pre_fd_slot(nfd);
	if (e)
		e->nonblock = (flags & SOCK_NONBLOCK) != 0;
	errno = saved;
	return nfd;
}

/* getsockopt: only RLT_NET's connect=timeout has a say (net_calls.c: SO_ERROR tells a
 * non-blocking attempt that was never made that it timed out); else the real one. In both
 * builds: the freestanding one's own calls come here too, and go to the system call. */
RLT_EXPORT int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	rlt_pre_ensure_real();
	return real_getsockopt(fd, level, name, val, len);
}

/* As connect: an accepted socket's entry is set up unless no rule exists at all. */
RLT_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	if (rlt_pre_idle(RLT_PASS_ALL))
		return real_accept(fd, addr, len);
	return accept_common(fd, addr, len, 0, 0);
}

RLT_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	if (rlt_pre_idle(RLT_PASS_ALL))
		return real_accept4(fd, addr, len, flags);
	return accept_common(fd, addr, len, flags, 1);
}
