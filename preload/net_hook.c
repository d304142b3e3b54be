/*
 * net_hook.c: the network conditions (RLT_NET, rlthrottle(7) NETWORK CONDITIONS) on both fronts.
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
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "clock.h"
#include "net.h"
#include "preload.h"
#include "publish.h"
#include "rule_set.h"
#include "wait.h"

enum { FD_UNKNOWN = 0, FD_OTHER, FD_SOCKET, FD_BUSY };

struct net_fd {
	_Atomic uint8_t kind;  /* FD_*: written last when an entry is set up */
	uint64_t seed;         /* the seed its sequence started from */
	uint64_t key;          /* which socket of the process it is (its sequence's key) */
	struct rlt__net_sock s;
};

#define NET_TABLE_MAX (1u << 20)
#define NET_TABLE_MIN (1u << 16)
/* How often a call held by hang looks whether a set released it. */
#define HANG_LOOK_NS (20 * 1000 * 1000ull)

static struct net_fd *tab;
static unsigned tab_n;
/* Sockets seen so far: the n-th socket a program opens gets the n-th key, whatever its fd (a
 * closed fd's number comes back for the next socket) and whichever front (the system-call
 * front's sockets sit at 512 and up). A fork's child goes on counting from its parent's. */
static _Atomic uint64_t sockets_seen;
static _Atomic int installed;

/* The functions the conditions stand in front of (the real ones, as resolved; their types are
 * preload.h's RLT_REAL_SYMBOLS). */
#define NET_CALLS(X) \
	X(socket) X(connect) X(accept) X(accept4) X(send) X(sendto) X(sendmsg) X(sendmmsg) \
	X(write) X(writev) X(sendfile) X(recv) X(recvfrom) X(recvmsg) X(recvmmsg) X(read) X(readv) \
	X(close) X(dup2) X(dup3)

#define NET_TRUE(name) static name##_t t_##name;
NET_CALLS(NET_TRUE)
#undef NET_TRUE

/* ----- the fd table ----- */

/* fd closed or replaced. Not in the child of a vfork (posix_spawn, CPython's subprocess) that
 * closes fds before its exec: its fd table is its own, our memory its parent's. */
static void forget(int fd)
{
	if (fd >= 0 && (unsigned)fd < tab_n && !rlt_pre_borrowed())
		atomic_store_explicit(&tab[fd].kind, FD_UNKNOWN, memory_order_release);
}

static uint64_t set_seed(const struct rlt__net_set *set)
{
	for (unsigned i = 0; i < set->n; i++)
		if (set->c[i].has_seed)
			return set->c[i].seed;
	return rlt__net_default_seed();
}

/* fd's entry as a socket opened now (or first seen now). */
static void open_entry(struct net_fd *e, int fd, int af, int stream, const struct rlt__peer *peer)
{
	uint32_t gen;
	const struct rlt__net_set *set = rlt__net_now(&gen);

	(void)fd;
	e->seed = set_seed(set);
	e->key = atomic_fetch_add_explicit(&sockets_seen, 1, memory_order_relaxed);
	rlt__net_sock_open(&e->s, af, stream, peer, e->seed, e->key, rlt__now());
}

/* Classifies fd (once): a socket gets its family, type and peer. NULL: not a socket of ours. */
static struct net_fd *entry(int fd)
{
	struct net_fd *e;
	uint8_t k;

	if (fd < 0 || (unsigned)fd >= tab_n)
		return NULL;
	e = &tab[fd];
	k = atomic_load_explicit(&e->kind, memory_order_acquire);
	if (k == FD_SOCKET)
		return e;
	if (k == FD_OTHER)
		return NULL;
	uint8_t want = FD_UNKNOWN;
	if (k == FD_BUSY || !atomic_compare_exchange_strong(&e->kind, &want, FD_BUSY)) {
		/* another thread classifies it: this call goes untouched */
		return NULL;
	}
	int type = 0, af = 0;
	socklen_t len = sizeof type;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
		atomic_store_explicit(&e->kind, FD_OTHER, memory_order_release);
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
	open_entry(e, fd, af, type == SOCK_STREAM, &peer);
	atomic_store_explicit(&e->kind, FD_SOCKET, memory_order_release);
	return e;
}

/* The conditions in force, with e's choices brought up to them. NULL: none apply to e. */
static const struct rlt__net_set *conditions(struct net_fd *e)
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

static int nonblocking(int fd, int flags)
{
	return (flags & MSG_DONTWAIT) || (real_fcntl(fd, F_GETFL) & O_NONBLOCK);
}

/* ----- what the conditions do ----- */

/* reset: a TCP connection is disconnected (connect with AF_UNSPEC: the kernel sends the peer a
 * RST, tcp_disconnect); a unix stream is shut down both ways. */
static void do_reset(int fd, struct net_fd *e)
{
	if (atomic_exchange(&e->s.ended, 1))
		return;
	if (e->s.af == AF_INET || e->s.af == AF_INET6) {
		struct sockaddr sa = {.sa_family = AF_UNSPEC};
		int saved = errno;
		t_connect(fd, &sa, sizeof sa);
		errno = saved;
	} else {
		syscall(SYS_shutdown, fd, SHUT_RDWR);
	}
	atomic_fetch_add_explicit(&rlt__net_stats.resets, 1, memory_order_relaxed);
}

/* hang: a blocking call waits until a set releases it, its close= comes (then the connection
 * is shut down and the kernel answers), or its own socket timeout (SO_RCVTIMEO, SO_SNDTIMEO)
 * passes (EAGAIN, as the kernel says). A non-blocking call gets EAGAIN. 1: the call goes on to
 * the kernel; 0 with *ret set: the call ends. */
static int hang(int fd, struct net_fd *e, unsigned dir, int nonblock, ssize_t *ret)
{
	const struct rlt__net_set *set;
	rlt_ns_t start = rlt__now(), deadline = RLT_NS_NEVER, until;
	uint64_t room;
	int counted = 0;

	for (;;) {
		set = conditions(e);
		if (!set || atomic_load_explicit(&e->s.ended, memory_order_relaxed))
			return 1;
		rlt_ns_t now = rlt__now();
		int st = rlt__net_hang_state(set, &e->s, now, &room, &until);
		if (st == 0)
			return 1;
		if (!counted++)
			atomic_fetch_add_explicit(&rlt__net_stats.hangs, 1, memory_order_relaxed);
		if (st == 2) {
			/* close=: a FIN to the peer, and the kernel answers this call and the next */
			atomic_store(&e->s.ended, 1);
			syscall(SYS_shutdown, fd, SHUT_RDWR);
			return 1;
		}
		if (nonblock) {
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

/* One real call moving bytes [off, off + len) of the caller's buffer. */
typedef ssize_t (*op_fn)(void *ctx, int fd, size_t off, size_t len);

/*
 * A send (dir RLT_NET_OUT) or receive (RLT_NET_IN) of len bytes on fd, under the conditions:
 * `addr` is a datagram's address when the socket has none (sendto's, or recvfrom's once filled,
 * through *addr_after). Streams: reset, hang, slice; datagrams: loss.
 */
static ssize_t net_io(int fd, unsigned dir, size_t len, int flags, const struct sockaddr *addr,
                      socklen_t addrlen, op_fn op, void *ctx)
{
	struct net_fd *e = entry(fd);
	const struct rlt__net_set *set;

	if (!e || rlt__internal || !(set = conditions(e)))
		return op(ctx, fd, 0, len);
	/* a datagram socket without a peer is matched per datagram, by its address */
	if (!e->s.applies && (e->s.stream || e->s.peer.af))
		return op(ctx, fd, 0, len);

	if (!e->s.stream) {
		struct rlt__peer to = {0};
		if (flags & MSG_PEEK)
			return op(ctx, fd, 0, len);
		if (dir == RLT_NET_OUT) {
			if (addr)
				rlt__peer_from_sockaddr(&to, addr, addrlen);
			if (rlt__net_drop(set, &e->s, RLT_NET_OUT, addr ? &to : NULL)) {
				/* sent, as far as the program can tell: the network lost it */
				atomic_fetch_add_explicit(&rlt__net_stats.dropped, 1, memory_order_relaxed);
				return (ssize_t)len;
			}
			return op(ctx, fd, 0, len);
		}
		/* Received: a lost one is taken off the queue and the call waits for the next (a
		 * non-blocking one gets the kernel's EAGAIN when none is left). Bounded by what
		 * arrives. */
		for (;;) {
			ssize_t n = op(ctx, fd, 0, len);
			if (n < 0)
				return n;
			if (addr)
				rlt__peer_from_sockaddr(&to, addr, addrlen);
			if (!rlt__net_drop(set, &e->s, RLT_NET_IN, addr ? &to : NULL))
				return n;
			atomic_fetch_add_explicit(&rlt__net_stats.dropped, 1, memory_order_relaxed);
		}
	}

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
		nonblock = nonblocking(fd, flags);
		if (!hang(fd, e, dir, nonblock, &ret))
			return ret;
		set = conditions(e);
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
		nonblock = whole ? nonblocking(fd, flags) : 1;
	size_t off = 0;
	for (;;) {
		size_t piece = (size_t)rlt__net_slice(set, &e->s, dir, len - off);
		if (piece < len - off)
			atomic_fetch_add_explicit(&rlt__net_stats.slices, 1, memory_order_relaxed);
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

/* ----- the calls ----- */

struct buf_ctx {
	const char *buf;
	int flags;
	const struct sockaddr *to;
	socklen_t tolen;
	struct sockaddr *from;
	socklen_t *fromlen;
};

static ssize_t op_send(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_send(fd, b->buf + off, len, b->flags);
}

static ssize_t op_sendto(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_sendto(fd, b->buf + off, len, b->flags, b->to, b->tolen);
}

static ssize_t op_write(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_write(fd, b->buf + off, len);
}

static ssize_t op_recv(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_recv(fd, (char *)b->buf + off, len, b->flags);
}

static ssize_t op_recvfrom(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_recvfrom(fd, (char *)b->buf + off, len, b->flags, b->from, b->fromlen);
}

static ssize_t op_read(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return t_read(fd, (char *)b->buf + off, len);
}

static ssize_t net_send(int fd, const void *buf, size_t len, int flags)
{
	struct buf_ctx c = {buf, flags, NULL, 0, NULL, NULL};
	return net_io(fd, RLT_NET_OUT, len, flags, NULL, 0, op_send, &c);
}

static ssize_t net_sendto(int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *to, socklen_t tolen)
{
	struct buf_ctx c = {buf, flags, to, tolen, NULL, NULL};
	return net_io(fd, RLT_NET_OUT, len, flags, to, tolen, op_sendto, &c);
}

static ssize_t net_write(int fd, const void *buf, size_t len)
{
	struct buf_ctx c = {buf, 0, NULL, 0, NULL, NULL};
	return net_io(fd, RLT_NET_OUT, len, 0, NULL, 0, op_write, &c);
}

static ssize_t net_recv(int fd, void *buf, size_t len, int flags)
{
	struct buf_ctx c = {buf, flags, NULL, 0, NULL, NULL};
	return net_io(fd, RLT_NET_IN, len, flags, NULL, 0, op_recv, &c);
}

static ssize_t net_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *fromlen)
{
	struct buf_ctx c = {buf, flags, NULL, 0, from, fromlen};
	/* the source is known once the datagram came: net_io reads it after the call */
	return net_io(fd, RLT_NET_IN, len, flags, fromlen ? from : NULL,
	              fromlen ? *fromlen : 0, op_recvfrom, &c);
}

static ssize_t net_read(int fd, void *buf, size_t len)
{
	struct buf_ctx c = {buf, 0, NULL, 0, NULL, NULL};
	return net_io(fd, RLT_NET_IN, len, 0, NULL, 0, op_read, &c);
}

struct file_ctx {
	int in;
	off_t *off;
};

/* The kernel moves sendfile's offset (or the file's position) itself: `off` is not needed. */
static ssize_t op_sendfile(void *c, int fd, size_t off, size_t len)
{
	struct file_ctx *f = c;
	(void)off;
	return t_sendfile(fd, f->in, f->off, len);
}

static ssize_t net_sendfile(int out, int in, off_t *off, size_t count)
{
	struct file_ctx c = {in, off};
	return net_io(out, RLT_NET_OUT, count, 0, NULL, 0, op_sendfile, &c);
}

struct msg_ctx {
	struct msghdr *msg; /* the caller's (a receive writes back its lengths and flags) */
	const struct iovec *iov;
	int cnt;
	int flags;
	int vec;            /* readv / writev */
	int out;
};

/* The part [off, off + len) of the message: a copy of its iovec cut to it (16 KiB of stack,
 * only in a call that slice= cuts: the system-call front runs hooks on a stack of its own). */
static __attribute__((noinline)) ssize_t op_msg_part(struct msg_ctx *m, int fd, size_t off,
                                                     size_t len)
{
	struct iovec piece[RLT_IOV_PIECE_MAX];
	int k = rlt_pre_iov_slice(m->iov, m->cnt, off, len, piece);

	if (m->vec)
		return m->out ? t_writev(fd, piece, k) : t_readv(fd, piece, k);
	struct msghdr h = *m->msg;
	h.msg_iov = piece;
	h.msg_iovlen = (size_t)k;
	if (off > 0) { /* ancillary data goes with the first piece only */
		h.msg_control = NULL;
		h.msg_controllen = 0;
	}
	if (m->out)
		return t_sendmsg(fd, &h, m->flags);
	ssize_t n = t_recvmsg(fd, &h, m->flags);
	m->msg->msg_namelen = h.msg_namelen;
	m->msg->msg_controllen = h.msg_controllen;
	m->msg->msg_flags = h.msg_flags;
	return n;
}

static ssize_t op_msg(void *c, int fd, size_t off, size_t len)
{
	struct msg_ctx *m = c;

	if (off == 0 && len == rlt_pre_iov_total(m->iov, m->cnt)) /* the whole message */
		return m->vec ? (m->out ? t_writev(fd, m->iov, m->cnt) : t_readv(fd, m->iov, m->cnt))
		              : (m->out ? t_sendmsg(fd, m->msg, m->flags)
		                        : t_recvmsg(fd, m->msg, m->flags));
	return op_msg_part(m, fd, off, len);
}

static ssize_t msg_io(int fd, struct msghdr *msg, const struct iovec *iov, int cnt, int flags,
                      int vec, int out)
{
	struct msg_ctx c = {msg, iov, cnt, flags, vec, out};
	if (cnt < 0 || cnt > RLT_IOV_PIECE_MAX)
		return vec ? (out ? t_writev(fd, iov, cnt) : t_readv(fd, iov, cnt))
		           : (out ? t_sendmsg(fd, msg, flags) : t_recvmsg(fd, msg, flags));
	return net_io(fd, out ? RLT_NET_OUT : RLT_NET_IN, rlt_pre_iov_total(iov, cnt), flags,
	              msg && msg->msg_name && (out || msg->msg_namelen) ? msg->msg_name : NULL,
	              msg && msg->msg_name ? msg->msg_namelen : 0, op_msg, &c);
}

static ssize_t net_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!msg)
		return t_sendmsg(fd, msg, flags);
	return msg_io(fd, (struct msghdr *)msg, msg->msg_iov, (int)msg->msg_iovlen, flags, 0, 1);
}

static ssize_t net_recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (!msg)
		return t_recvmsg(fd, msg, flags);
	return msg_io(fd, msg, msg->msg_iov, (int)msg->msg_iovlen, flags, 0, 0);
}

static ssize_t net_writev(int fd, const struct iovec *iov, int cnt)
{
	return msg_io(fd, NULL, iov, cnt, 0, 1, 1);
}

static ssize_t net_readv(int fd, const struct iovec *iov, int cnt)
{
	return msg_io(fd, NULL, iov, cnt, 0, 1, 0);
}

/* The socket of a batch of datagrams (sendmmsg, recvmmsg) that a loss condition may touch in
 * direction dir, or NULL (the batch goes to the kernel as it is). */
static struct net_fd *batch_socket(int fd, unsigned dir, const struct rlt__net_set **setp)
{
	struct net_fd *e = entry(fd);
	const struct rlt__net_set *set;

	if (!e || rlt__internal || e->s.stream || !(set = conditions(e)))
		return NULL;
	if (!e->s.applies && e->s.peer.af)
		return NULL;
	for (unsigned i = 0; i < set->n; i++)
		if (set->c[i].kind == RLT_NET_LOSS && (set->c[i].dir & dir)) {
			*setp = set;
			return e;
		}
	return NULL;
}

/* sendmmsg under loss: message by message, each drawn for as sendto's (a lost one counts as
 * sent, its msg_len its length); the count sent, or -1 when the first fails. */
static int net_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	const struct rlt__net_set *set;
	struct net_fd *e = vec ? batch_socket(fd, RLT_NET_OUT, &set) : NULL;

	if (!e)
		return t_sendmmsg(fd, vec, vlen, flags);
	if (vlen > 1024)
		vlen = 1024; /* UIO_MAXIOV: the kernel caps it the same way */
	for (unsigned i = 0; i < vlen; i++) {
		struct msghdr *h = &vec[i].msg_hdr;
		struct rlt__peer to = {0};
		if (h->msg_name)
			rlt__peer_from_sockaddr(&to, h->msg_name, h->msg_namelen);
		if (rlt__net_drop(set, &e->s, RLT_NET_OUT, h->msg_name ? &to : NULL)) {
			atomic_fetch_add_explicit(&rlt__net_stats.dropped, 1, memory_order_relaxed);
			vec[i].msg_len = (unsigned)rlt_pre_iov_total(h->msg_iov, (int)h->msg_iovlen);
			continue;
		}
		ssize_t n = t_sendmsg(fd, h, flags);
		if (n < 0)
			return i ? (int)i : -1;
		vec[i].msg_len = (unsigned)n;
	}
	return (int)vlen;
}

/* recvmmsg under loss: message by message, a lost one taken off the queue and its slot used
 * for the next; the first as the call's flags say, the rest only if already there (as with
 * MSG_WAITFORONE; the timeout is not applied). */
static int net_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                        struct timespec *timeout)
{
	const struct rlt__net_set *set;
	struct net_fd *e = vec ? batch_socket(fd, RLT_NET_IN, &set) : NULL;
	unsigned i = 0;

	if (!e || (flags & MSG_PEEK))
		return t_recvmmsg(fd, vec, vlen, flags, timeout);
	if (vlen > 1024)
		vlen = 1024;
	flags &= ~MSG_WAITFORONE;
	while (i < vlen) {
		struct msghdr *h = &vec[i].msg_hdr;
		socklen_t namelen = h->msg_namelen;
		size_t controllen = h->msg_controllen;
		ssize_t n = t_recvmsg(fd, h, i ? flags | MSG_DONTWAIT : flags);
		if (n < 0)
			return i ? (int)i : -1;
		struct rlt__peer from = {0};
		if (h->msg_name)
			rlt__peer_from_sockaddr(&from, h->msg_name, h->msg_namelen);
		if (rlt__net_drop(set, &e->s, RLT_NET_IN, h->msg_name ? &from : NULL)) {
			atomic_fetch_add_explicit(&rlt__net_stats.dropped, 1, memory_order_relaxed);
			h->msg_namelen = namelen; /* the slot as the caller gave it, for the next */
			h->msg_controllen = controllen;
			continue;
		}
		vec[i++].msg_len = (unsigned)n;
	}
	return (int)i;
}

/* connect=refuse fails at once; connect=timeout holds a blocking connect DUR (a black hole
 * answers nothing) then fails ETIMEDOUT, without connecting. A non-blocking connect under
 * timeout goes to the kernel: its EINPROGRESS needs readiness held back (not built yet). */
static int net_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct net_fd *e = entry(fd);
	struct rlt__peer peer;
	const struct rlt__net_set *set;
	uint64_t after = 0;

	if (!e || rlt__internal || !sa || len < (socklen_t)sizeof(sa_family_t) ||
	    sa->sa_family == AF_UNSPEC)
		return t_connect(fd, sa, len);
	rlt__peer_from_sockaddr(&peer, sa, len);
	if (e->s.af == AF_UNIX)
		peer.af = AF_UNIX;
	set = conditions(e);
	if (set) {
		int f = rlt__net_connect_fault(set, e->s.af, &peer, &e->s.rng, &after);
		if (f == RLT_NET_REFUSE) {
			atomic_fetch_add_explicit(&rlt__net_stats.refused, 1, memory_order_relaxed);
			return rlt_pre_fail(ECONNREFUSED);
		}
		if (f == RLT_NET_TIMEOUT && nonblocking(fd, 0)) {
			static _Atomic int told;
			if (!atomic_exchange(&told, 1))
				rlt_pre_log(RLT_LOG_WARN, RLT_NET_VAR ": connect=timeout on a "
				                          "non-blocking connect is not built yet: it "
				                          "goes to the kernel");
		} else if (f == RLT_NET_TIMEOUT) {
			atomic_fetch_add_explicit(&rlt__net_stats.timeouts, 1, memory_order_relaxed);
			rlt__sleep_until(rlt__now() + after);
			return rlt_pre_fail(ETIMEDOUT);
		}
	}
	int rc = t_connect(fd, sa, len);
	int err = errno;
	if (rc == 0 || err == EINPROGRESS) {
		/* a connection opens now: its conditions are chosen for its peer */
		e->s.peer = peer;
		e->s.opened = rlt__now();
		atomic_store_explicit(&e->s.moved, 0, memory_order_relaxed);
		atomic_store_explicit(&e->s.hung_at, 0, memory_order_relaxed);
		atomic_store_explicit(&e->s.ended, 0, memory_order_relaxed);
		e->s.gen = 0;
	}
	errno = err;
	return rc;
}

static int net_socket(int d, int t, int p)
{
	int fd = t_socket(d, t, p);
	if (fd >= 0 && (unsigned)fd < tab_n) {
		struct net_fd *e = &tab[fd];
		atomic_store_explicit(&e->kind, FD_BUSY, memory_order_relaxed);
		open_entry(e, fd, d, (t & 0xf) == SOCK_STREAM, NULL);
		atomic_store_explicit(&e->kind, FD_SOCKET, memory_order_release);
	}
	return fd;
}

/* An accepted connection opens now: classified at once, so that after=DUR counts from here. */
static int accepted(int fd)
{
	if (fd >= 0) {
		forget(fd);
		entry(fd);
	}
	return fd;
}

static int net_accept(int fd, struct sockaddr *a, socklen_t *n)
{
	return accepted(t_accept(fd, a, n));
}

static int net_accept4(int fd, struct sockaddr *a, socklen_t *n, int fl)
{
	return accepted(t_accept4(fd, a, n, fl));
}

static int net_close(int fd)
{
	forget(fd);
	return t_close(fd);
}

static int net_dup2(int o, int n)
{
	int rc = t_dup2(o, n);
	if (rc >= 0 && o != n)
		forget(rc);
	return rc;
}

static int net_dup3(int o, int n, int fl)
{
	int rc = t_dup3(o, n, fl);
	if (rc >= 0)
		forget(rc);
	return rc;
}

/* ----- installing ----- */

/* Replaces the real functions by ours, once (at load with RLT_NET set, or when a set first
 * brings conditions). A pointer store each: a thread calling meanwhile takes the old one or
 * ours, both of which work. */
static void install(void)
{
	if (atomic_exchange(&installed, 1))
		return;
	if (!tab) {
		struct rlimit rl;
		unsigned n = NET_TABLE_MIN;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rlim_t want = rl.rlim_max == RLIM_INFINITY ? NET_TABLE_MAX : rl.rlim_max;
			if (want > n)
				n = want > NET_TABLE_MAX ? NET_TABLE_MAX : (unsigned)want;
		}
		tab = rlt__map_anon((size_t)n * sizeof *tab);
		if (!tab) {
			rlt_pre_log(RLT_LOG_WARN, RLT_NET_VAR ": no memory for the socket table: "
			                          "no condition applies");
			return;
		}
		tab_n = n;
	}
#define NET_SWAP(name)                                                                           \
	t_##name = real_##name;                                                                  \
	real_##name = net_##name;
	NET_CALLS(NET_SWAP)
#undef NET_SWAP
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
