/*
 * net_hook.c: the network conditions (RLT_NET, rlthrottle(7) NETWORK CONDITIONS) on both fronts:
 * the socket table, what a condition does to a call, the installing (the calls themselves:
 * net_calls.c; latency's arrivals and due times: net_latency.c).
 *
 * The conditions act where a call reaches the kernel: when RLT_NET is set, the real functions
 * the hooks call (real_send, real_recv, real_connect, ...: real.c's dlsym, or real_sys.c's raw
 * system calls in the freestanding build) are replaced by the functions below, which decide
 * with src/net_cond.c and then make the true call. Every way a hook reaches the kernel (the gate's
 * straight jump, a paced piece of io_pacing.c) goes through them, and a rule's pacing sees the
 * short reads and writes of a slice as a network's. Without RLT_NET nothing here is installed:
 * a call costs what it cost before, not one branch more.
 *
 * Per socket: src/net_cond.c's state (its random sequence, bytes moved, when it opened), in a
 * table indexed by fd, made at load (no allocation in a call). A never-seen fd is classified
 * once (getsockopt, getpeername).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "fdtable.h"
#include "net.h"
#include "preload.h"
#include "real.h"
#include "redis_client.h"
#include "load.h"
#include "publish.h"
#include "rule_set.h"
#include "hook_poll.h"
#include "net_delay.h"
#include "net_hook.h"
#include "net_latency.h"
#include "net_line.h"
#include "wait.h"

/* How often a call held by hang looks whether a set released it. */
#define HANG_LOOK_NS (20 * 1000 * 1000ull)

struct rlt_pre_net_fd *rlt_pre_net_tab;
unsigned rlt_pre_net_tab_n;
/* Sockets seen so far: the n-th socket a program opens gets the n-th key, whatever its fd (a
 * closed fd's number comes back for the next socket) and whichever front (the system-call
 * front's sockets sit at 512 and up). A fork's child goes on counting from its parent's. */
static _Atomic uint64_t sockets_seen;
static _Atomic int installed;

/* ----- the fd table ----- */

/* fd closed or replaced. Not in the child of a vfork (posix_spawn, CPython's subprocess) that
 * closes fds before its exec: its fd table is its own, our memory its parent's. */
void rlt_pre_net_forget(int fd)
{
	if (fd >= 0 && (unsigned)fd < rlt_pre_net_tab_n && !rlt_pre_borrowed()) {
		atomic_store_explicit(&rlt_pre_net_tab[fd].kind, RLT_PRE_FD_UNKNOWN, memory_order_release);
		rlt_pre_line_drop(&rlt_pre_net_tab[fd]);
	}
}

void rlt_pre_net_dup(int oldfd, int newfd)
{
	struct rlt_pre_net_fd *from, *to;

	if (!rlt_pre_net_on() || oldfd == newfd || oldfd < 0 || (unsigned)oldfd >= rlt_pre_net_tab_n ||
	    rlt_pre_borrowed())
		return;
	from = &rlt_pre_net_tab[oldfd];
	rlt_ns_t b = atomic_load_explicit(&from->kind, memory_order_acquire) == RLT_PRE_FD_SOCKET
	                     ? atomic_load_explicit(&from->black_until, memory_order_acquire)
	                     : 0;
	int line = atomic_load_explicit(&from->line, memory_order_acquire) != 0;
	if (!b && !line)
		return;
	rlt_pre_net_forget(newfd); /* what its number held before is not this socket's */
	if (!(to = rlt_pre_net_entry(newfd)))
		return;
	if (b)
		atomic_store_explicit(&to->black_until, b, memory_order_release);
	if (line) /* the socket's delay line (net_line.c): what it holds, the dup reads too */
		rlt_pre_line_share(from, to);
}

static uint64_t set_seed(const struct rlt__net_set *set)
{
	for (unsigned i = 0; i < set->n; i++)
		if (set->c[i].has_seed)
			return set->c[i].seed;
	return rlt__net_default_seed();
}

/* fd's entry as a socket opened now (or first seen now). */
void rlt_pre_net_open(struct rlt_pre_net_fd *e, int fd, int af, int stream, const struct rlt__peer *peer)
{
	uint32_t gen;
	const struct rlt__net_set *set = rlt__net_now(&gen);

	(void)fd;
	rlt_pre_line_drop(e); /* a line left by a close we did not see (close_range) */
	e->seed = set_seed(set);
	e->key = atomic_fetch_add_explicit(&sockets_seen, 1, memory_order_relaxed);
	atomic_store_explicit(&e->black_until, 0, memory_order_relaxed);
	rlt__net_sock_open(&e->s, af, stream, peer, e->seed, e->key, rlt__now());
}

/* Classifies fd (once): a socket gets its family, type and peer. NULL: not a socket of ours. */
struct rlt_pre_net_fd *rlt_pre_net_entry(int fd)
{
	struct rlt_pre_net_fd *e;
	uint8_t k;

	if (fd < 0 || (unsigned)fd >= rlt_pre_net_tab_n)
		return NULL;
	e = &rlt_pre_net_tab[fd];
	k = atomic_load_explicit(&e->kind, memory_order_acquire);
	if (k == RLT_PRE_FD_SOCKET)
		return e;
	if (k == RLT_PRE_FD_OTHER)
		return NULL;
	uint8_t want = RLT_PRE_FD_UNKNOWN;
	if (k == RLT_PRE_FD_BUSY || !atomic_compare_exchange_strong(&e->kind, &want, RLT_PRE_FD_BUSY)) {
		/* another thread classifies it: this call goes untouched */
		return NULL;
	}
	int type = 0, af = 0;
	socklen_t len = sizeof type;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
		atomic_store_explicit(&e->kind, RLT_PRE_FD_OTHER, memory_order_release);
		return NULL;
	}
	len = sizeof af;
	getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &af, &len);
	struct sockaddr_storage ss;
	struct rlt__peer peer = {0};
	socklen_t sl = sizeof ss;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		rlt__peer_from_sockaddr(&peer, (struct sockaddr *)&ss, sl);
	if (af == AF_UNIX)
		peer.af = AF_UNIX;
	rlt_pre_net_open(e, fd, af, type == SOCK_STREAM, &peer);
	atomic_store_explicit(&e->kind, RLT_PRE_FD_SOCKET, memory_order_release);
	return e;
}

/* The conditions in force, with e's choices brought up to them. NULL: none apply to e. */
const struct rlt__net_set *rlt_pre_net_conditions(struct rlt_pre_net_fd *e)
{
	uint32_t gen;
	const struct rlt__net_set *set;

	if (rlt_pre_rules.pub && rlt__ctl_pending(&rlt_pre_rules))
		rlt__ctl_serve(&rlt_pre_rules); /* a `set` of RLT_NET reaches a net-only socket too */
	set = rlt__net_now(&gen);
	if (set->n == 0)
		return NULL;
	if (e->s.gen != gen) {
		uint64_t sd = set_seed(set);
		if (sd != e->seed) {
			e->seed = sd;
			rlt__net_rng_init(&e->s.rng, sd, e->key);
		}
		rlt__net_sock_choose(&e->s, set, gen);
	}
	return set;
}

int rlt_pre_net_nonblocking(int fd, int flags)
{
	return (flags & MSG_DONTWAIT) || (real_fcntl(fd, F_GETFL) & O_NONBLOCK);
}

/* ----- what the conditions do ----- */

/* reset: a TCP connection is disconnected (connect with AF_UNSPEC: the kernel sends the peer a
 * RST, tcp_disconnect); a unix stream is shut down both ways. */
static void do_reset(int fd, struct rlt_pre_net_fd *e)
{
	if (atomic_exchange(&e->s.ended, 1))
		return;
	rlt_pre_line_drop(e); /* what the line held is lost with the connection */
	if (e->s.af == AF_INET || e->s.af == AF_INET6) {
		struct sockaddr sa = {.sa_family = AF_UNSPEC};
		int saved = errno;
		rlt_pre_true_connect(fd, &sa, sizeof sa);
		errno = saved;
	} else {
		syscall(SYS_shutdown, fd, SHUT_RDWR);
	}
	atomic_fetch_add_explicit(&rlt__net_counts->resets, 1, memory_order_relaxed);
}

/* hang's close= is due: a FIN to the peer, and the kernel answers this call and the next. */
static void hang_close(int fd, struct rlt_pre_net_fd *e)
{
	atomic_store(&e->s.ended, 1);
	syscall(SYS_shutdown, fd, SHUT_RDWR);
}

/* hang: a blocking call waits until a set releases it, its close= comes (then the connection
 * is shut down and the kernel answers), or its own socket timeout (SO_RCVTIMEO, SO_SNDTIMEO)
 * passes (EAGAIN, as the kernel says). A non-blocking call gets EAGAIN. 1: the call goes on to
 * the kernel; 0 with *ret set: the call ends. */
static int hang(int fd, struct rlt_pre_net_fd *e, unsigned dir, int nonblock, ssize_t *ret)
{
	const struct rlt__net_set *set;
	rlt_ns_t start = rlt__now(), deadline = RLT_NS_NEVER, until;
	uint64_t room;
	int counted = 0;

	for (;;) {
		set = rlt_pre_net_conditions(e);
		if (!set || atomic_load_explicit(&e->s.ended, memory_order_relaxed))
			return 1;
		rlt_ns_t now = rlt__now();
		int st = rlt__net_hang_state(set, &e->s, now, &room, &until);
		if (st == 0)
			return 1;
		if (!counted++)
			atomic_fetch_add_explicit(&rlt__net_counts->hangs, 1, memory_order_relaxed);
		if (st == 2) {
			hang_close(fd, e);
			return 1;
		}
		if (nonblock) {
			/* an edge-triggered registration gets its edge back when a set releases it */
			rlt_pre_fd_refused(fd, dir == RLT_NET_IN ? RLT_VAR_RECV : RLT_VAR_SEND);
			*ret = rlt_pre_fail(EAGAIN);
			return 0;
		}
		if (deadline == RLT_NS_NEVER) {
			struct timeval tv = {0};
			socklen_t len = sizeof tv;
			if (getsockopt(fd, SOL_SOCKET, dir == RLT_NET_IN ? SO_RCVTIMEO : SO_SNDTIMEO, &tv,
			               &len) == 0 && (tv.tv_sec || tv.tv_usec))
				deadline = start + (rlt_ns_t)tv.tv_sec * RLT_NS_PER_SEC +
				           (rlt_ns_t)tv.tv_usec * 1000;
		}
		if (now >= deadline) {
			*ret = rlt_pre_fail(EAGAIN);
			return 0;
		}
		rlt_ns_t at = now + HANG_LOOK_NS;
		if (until < at)
			at = until;
		if (deadline < at)
			at = deadline;
		rlt__sleep_until(at);
	}
}

/* ----- what the waits and the delay line ask ----- */

int rlt_pre_net_on(void)
{
	return atomic_load_explicit(&installed, memory_order_acquire);
}

/* A socket of fd a waits may be held back for: a stream with a hang, or any with a latency,
 * that applies to it; and its conditions (NULL: none). */
static const struct rlt__net_set *holding_socket(int fd, struct rlt_pre_net_fd **ep)
{
	struct rlt_pre_net_fd *e;
	const struct rlt__net_set *set;

	if (!rlt_pre_net_on() || rlt__internal || !(e = rlt_pre_net_entry(fd)) ||
	    atomic_load_explicit(&e->s.ended, memory_order_relaxed) ||
	    !(set = rlt_pre_net_conditions(e)))
		return NULL;
	if (!(e->s.stream && rlt__net_find(set, &e->s, RLT_NET_HANG, RLT_NET_BOTH)) &&
	    !rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN))
		return NULL;
	*ep = e;
	return set;
}

/* fd's entry when it has a delay line (net_delay.c), latency or not now: what it holds is
 * handed on first, even after a set cleared the latency. */
static struct rlt_pre_net_fd *line_entry(int fd)
{
	struct rlt_pre_net_fd *e;

	if (!rlt_pre_net_on() || rlt__internal || fd < 0 || (unsigned)fd >= rlt_pre_net_tab_n)
		return NULL;
	e = &rlt_pre_net_tab[fd];
	return atomic_load_explicit(&e->line, memory_order_acquire) ? e : NULL;
}

int rlt_pre_net_in_hung(struct rlt_pre_net_fd *e, rlt_ns_t now)
{
	const struct rlt__net_set *set;
	uint64_t room;
	rlt_ns_t until;

	if (!e->s.stream || atomic_load_explicit(&e->s.ended, memory_order_relaxed) ||
	    !(set = rlt_pre_net_conditions(e)) || !rlt__net_find(set, &e->s, RLT_NET_HANG, RLT_NET_IN))
		return 0;
	return rlt__net_hang_state(set, &e->s, now, &room, &until) == 1;
}

int rlt_pre_net_splice_in(int in, int out, size_t len, unsigned flags, ssize_t *ret)
{
	struct rlt_pre_net_fd *e = line_entry(in);

	return e && rlt_pre_delay_splice(in, e, out, len, flags, ret);
}

int rlt_pre_net_inq(int fd, int *n)
{
	struct rlt_pre_net_fd *e = line_entry(fd);

	return e && rlt_pre_delay_inq(e, n);
}

/* What a delay line whose latency a set cleared goes on with: no delay. */
static const struct rlt__net_cond no_delay = {.kind = RLT_NET_LATENCY, .dir = RLT_NET_IN};

int rlt_pre_net_may_hold(int fd)
{
	struct rlt_pre_net_fd *e;

	return holding_socket(fd, &e) != NULL || line_entry(fd) != NULL;
}

unsigned rlt_pre_net_held(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due)
{
	static const struct {
		unsigned dir, events;
	} side[2] = {{RLT_NET_IN, RLT_PRE_IN_EVENTS}, {RLT_NET_OUT, RLT_PRE_OUT_EVENTS}};
	struct rlt_pre_net_fd *e;
	const struct rlt__net_set *set = holding_socket(fd, &e);
	unsigned held = 0;
	const struct rlt__net_cond *lc;

	if (!set && (events & RLT_PRE_IN_EVENTS) && (e = line_entry(fd))) {
		rlt_pre_delay_held(fd, e, &no_delay, events, now, due, &held);
		return held;
	}
	if (set && (events & RLT_PRE_IN_EVENTS) &&
	    ((lc = rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN)) ||
	     (line_entry(fd) && (lc = &no_delay)))) {
		rlt_ns_t t = 0;
		/* a stream's delay line says when it is readable; else the kernel's head */
		if (!(e->s.stream && rlt_pre_delay_held(fd, e, lc, events, now, due, &held)))
			t = rlt_pre_latency_due(fd, e, lc);
		if (t > now) {
			held |= events & RLT_PRE_IN_EVENTS;
			*due = t < *due ? t : *due;
		}
	}
	for (unsigned i = 0; set && e->s.stream && i < 2; i++) {
		uint64_t room;
		rlt_ns_t until;
		if (!(events & side[i].events) || !rlt__net_find(set, &e->s, RLT_NET_HANG, side[i].dir))
			continue;
		int st = rlt__net_hang_state(set, &e->s, now, &room, &until);
		if (st == 2) {
			/* its close= came while the program waits: the FIN it reads is the kernel's */
			hang_close(fd, e);
			return 0;
		}
		if (st == 1) {
			held |= events & side[i].events;
			/* a set may release it: looked at again, as a blocked call does */
			rlt_ns_t t = now + HANG_LOOK_NS < until ? now + HANG_LOOK_NS : until;
			*due = t < *due ? t : *due;
		}
	}
	return held;
}

/* A receive on a datagram socket without a peer whose caller asked no source (recv, read,
 * readv, recvmsg without a name): made as a recvmsg with a name of ours, the same call for a
 * datagram, so that the datagram's source is known (a loss with peer= or port= is matched by
 * it, as recvfrom's). */
static ssize_t recv_sourced(int fd, const struct rlt_pre_net_into *into, int flags,
                            struct rlt__peer *src)
{
	struct sockaddr_storage ss;
	struct msghdr h = into->msg ? *into->msg : (struct msghdr){0};

	h.msg_name = &ss;
	h.msg_namelen = sizeof ss;
	h.msg_iov = (struct iovec *)into->iov;
	h.msg_iovlen = (size_t)into->cnt;
	ssize_t n = rlt_pre_true_recvmsg(fd, &h, flags);
	if (n < 0)
		return n;
	if (into->msg) {
		into->msg->msg_controllen = h.msg_controllen;
		into->msg->msg_flags = h.msg_flags;
	}
	rlt__peer_from_sockaddr(src, (struct sockaddr *)&ss, h.msg_namelen);
	return n;
}

/* rlt_pre_net_io's datagram: loss. */
static ssize_t dgram_io(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_set *set,
                        unsigned dir, size_t len, int flags, const struct sockaddr *addr,
                        socklen_t addrlen, rlt_pre_net_op_fn op, void *ctx,
                        const struct rlt_pre_net_into *into)
{
	struct rlt__peer to = {0};

	if (flags & MSG_PEEK)
		return op(ctx, fd, 0, len);
	if (dir == RLT_NET_OUT) {
		if (addr)
			rlt__peer_from_sockaddr(&to, addr, addrlen);
		if (rlt__net_drop(set, &e->s, RLT_NET_OUT, addr ? &to : NULL)) {
			/* sent, as far as the program can tell: the network lost it */
			atomic_fetch_add_explicit(&rlt__net_counts->dropped, 1, memory_order_relaxed);
			return (ssize_t)len;
		}
		return op(ctx, fd, 0, len);
	}
	/* Received: a lost one is taken off the queue and the call waits for the next (a
	 * non-blocking one gets the kernel's EAGAIN when none is left). Bounded by what arrives. */
	int sourced = !addr && !e->s.peer.af && into && into->cnt >= 0;
	for (;;) {
		ssize_t n = sourced ? recv_sourced(fd, into, flags, &to) : op(ctx, fd, 0, len);
		if (n < 0)
			return n;
		if (addr)
			rlt__peer_from_sockaddr(&to, addr, addrlen);
		if (!rlt__net_drop(set, &e->s, RLT_NET_IN, addr || sourced ? &to : NULL))
			return n;
		atomic_fetch_add_explicit(&rlt__net_counts->dropped, 1, memory_order_relaxed);
	}
}

/*
 * A send (dir RLT_NET_OUT) or receive (RLT_NET_IN) of len bytes on fd, under the conditions:
 * `addr` is a datagram's address when the socket has none (sendto's, or recvfrom's once filled,
 * through *addr_after). Streams: reset, hang, slice; datagrams: loss.
 */
/* A stream's receive under latency, served by its delay line (net_delay.c), or when it has
 * none, left in the kernel until due (rlt_pre_latency_wait) and made by the caller's op. */
struct delay_ctx {
	struct rlt_pre_net_fd *e;
	const struct rlt__net_cond *c;
	int flags;
	const struct rlt_pre_net_into *into;
	rlt_pre_net_op_fn op;
	void *ctx;
};

static ssize_t op_delayed(void *x, int fd, size_t off, size_t len)
{
	struct delay_ctx *d = x;
	ssize_t ret;

	if (rlt_pre_delay_recv(fd, d->e, d->c, off, len, d->flags, d->into, &ret))
		return ret;
	if (!(d->flags & MSG_PEEK) && !rlt_pre_latency_wait(fd, d->e, d->c, d->flags, &ret))
		return ret;
	return d->op(d->ctx, fd, off, len);
}

ssize_t rlt_pre_net_io(int fd, unsigned dir, size_t len, int flags, const struct sockaddr *addr,
                      socklen_t addrlen, rlt_pre_net_op_fn op, void *ctx,
                      const struct rlt_pre_net_into *into)
{
	struct delay_ctx dc;

	struct rlt_pre_net_fd *e = rlt_pre_net_entry(fd);
	const struct rlt__net_set *set;

	if (dir == RLT_NET_IN && e && e == line_entry(fd)) {
		/* a line goes on handing on what it holds, latency or not now */
		dc = (struct delay_ctx){e, &no_delay, flags, into, op, ctx};
		op = op_delayed;
		ctx = &dc;
	}
	if (!e || rlt__internal || !(set = rlt_pre_net_conditions(e)))
		return op(ctx, fd, 0, len);
	/* a datagram socket without a peer is matched per datagram, by its address */
	if (!e->s.applies && (e->s.stream || e->s.peer.af))
		return op(ctx, fd, 0, len);
	/* latency: the data reaches the program DUR after its host */
	const struct rlt__net_cond *lc;
	if (dir == RLT_NET_IN && e->s.stream &&
	    (lc = rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN))) {
		/* a stream's: its delay line hands each piece on when due (peeks too) */
		dc = (struct delay_ctx){e, lc, flags, into, op, ctx};
		op = op_delayed;
		ctx = &dc;
	} else if (dir == RLT_NET_IN && !(flags & MSG_PEEK) &&
	           (lc = rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN))) {
		ssize_t ret;
		if (!rlt_pre_latency_wait(fd, e, lc, flags, &ret))
			return ret;
	}

	if (!e->s.stream)
		return dgram_io(fd, e, set, dir, len, flags, addr, addrlen, op, ctx, into);

	/* a stream */
	uint64_t room;
	ssize_t ret;
	if (atomic_load_explicit(&e->s.ended, memory_order_relaxed))
		return op(ctx, fd, 0, len); /* reset or closed: the kernel answers */
	if (rlt__net_reset_due(set, &e->s, rlt__now(), &room)) {
		do_reset(fd, e);
		return rlt_pre_fail(ECONNRESET);
	}
	int nonblock = -1;
	if (rlt__net_find(set, &e->s, RLT_NET_HANG, dir)) {
		nonblock = rlt_pre_net_nonblocking(fd, flags);
		if (!hang(fd, e, dir, nonblock, &ret))
			return ret;
		set = rlt_pre_net_conditions(e);
		if (!set)
			return op(ctx, fd, 0, len);
	}
	/* a reset or hang due after SIZE bytes: the call moves no more than the bytes left */
	{
		uint64_t hroom;
		rlt_ns_t until;
		if (rlt__net_find(set, &e->s, RLT_NET_HANG, dir) &&
		    rlt__net_hang_state(set, &e->s, rlt__now(), &hroom, &until) == 0 && hroom < room)
			room = hroom;
	}
	if (room < len)
		len = (size_t)room;
	if (len == 0)
		return op(ctx, fd, 0, 0);

	const struct rlt__net_cond *sl = rlt__net_find(set, &e->s, RLT_NET_SLICE, dir);
	if (!sl) {
		ssize_t n = op(ctx, fd, 0, len);
		if (n > 0)
			atomic_fetch_add_explicit(&e->s.moved, (uint64_t)n, memory_order_relaxed);
		return n;
	}
	/* a receive returns each piece as it comes, unless MSG_WAITALL asks for all of it */
	int whole = dir == RLT_NET_OUT || (flags & MSG_WAITALL);
	if (nonblock < 0)
		nonblock = whole ? rlt_pre_net_nonblocking(fd, flags) : 1;
	size_t off = 0;
	for (;;) {
		size_t piece = (size_t)rlt__net_slice(set, &e->s, dir, len - off);
		if (piece < len - off)
			atomic_fetch_add_explicit(&rlt__net_counts->slices, 1, memory_order_relaxed);
		ssize_t n = op(ctx, fd, off, piece);
		if (n < 0)
			return off ? (ssize_t)off : n;
		atomic_fetch_add_explicit(&e->s.moved, (uint64_t)n, memory_order_relaxed);
		off += (size_t)n;
		/* a blocking send (or MSG_WAITALL receive) goes on, piece after piece, as it
		 * promises, with delay= between */
		if (!whole || nonblock || (size_t)n < piece || off >= len)
			return (ssize_t)off;
		if (sl->delay_ns)
			rlt__sleep_until(rlt__now() + sl->delay_ns);
	}
}

/* ----- installing ----- */

/* Replaces the real functions by ours, once (at load with RLT_NET set, or when a set first
 * brings conditions). A pointer store each: a thread calling meanwhile takes the old one or
 * ours, both of which work. */
static void install(void)
{
	if (atomic_exchange(&installed, 1))
		return;
	if (!rlt_pre_net_tab) {
		unsigned n = rlt_pre_fd_slots();
		rlt_pre_net_tab = rlt__map_anon((size_t)n * sizeof *rlt_pre_net_tab);
		if (!rlt_pre_net_tab) {
			rlt_pre_log(RLT_LOG_WARN, RLT_NET_VAR ": no memory for the socket table: "
			                          "no condition applies");
			return;
		}
		rlt_pre_net_tab_n = n;
	}
	rlt_pre_net_swap();
}

int rlt_pre_net_load(struct rlt_error *err)
{
	const char *v = getenv(RLT_NET_VAR);
	uint32_t gen;

	rlt__net_on_set = install;
	if (rlt__net_load(v, err) != 0)
		return -1;
	const struct rlt__net_set *set = rlt__net_now(&gen);
	for (unsigned i = 0; i < set->n; i++) {
		char canon[RLT_RULE_TEXT_MAX + 64];
		rlt__net_format(&set->c[i], canon, sizeof canon);
		rlt_pre_log(RLT_LOG_INFO, RLT_NET_VAR ": %s", canon);
	}
	/* set but empty: ready for a `set` to bring conditions */
	if (v || set->n)
		install();
	return 0;
}
