/*
 * net_calls.c: the calls the network conditions (net_hook.c) stand in front of: each makes its
 * true call through rlt_pre_net_io, or decides a batch, a connect, an accept, a close itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "io_pacing.h"
#include "load.h"
#include "net.h"
#include "net_delay.h"
#include "net_hook.h"
#include "net_latency.h"
#include "preload.h"
#include "wait.h"

#define NET_TRUE(name) name##_t rlt_pre_true_##name;
NET_CALLS(NET_TRUE)
#undef NET_TRUE

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
	return rlt_pre_true_send(fd, b->buf + off, len, b->flags);
}

static ssize_t op_sendto(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return rlt_pre_true_sendto(fd, b->buf + off, len, b->flags, b->to, b->tolen);
}

static ssize_t op_write(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return rlt_pre_true_write(fd, b->buf + off, len);
}

static ssize_t op_recv(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return rlt_pre_true_recv(fd, (char *)b->buf + off, len, b->flags);
}

static ssize_t op_recvfrom(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return rlt_pre_true_recvfrom(fd, (char *)b->buf + off, len, b->flags, b->from, b->fromlen);
}

static ssize_t op_read(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	return rlt_pre_true_read(fd, (char *)b->buf + off, len);
}

static ssize_t net_send(int fd, const void *buf, size_t len, int flags)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_send(fd, buf, len, flags);
	struct buf_ctx c = {buf, flags, NULL, 0, NULL, NULL};
	return rlt_pre_net_io(fd, RLT_NET_OUT, len, flags, NULL, 0, op_send, &c, NULL);
}

static ssize_t net_sendto(int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *to, socklen_t tolen)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_sendto(fd, buf, len, flags, to, tolen);
	struct buf_ctx c = {buf, flags, to, tolen, NULL, NULL};
	return rlt_pre_net_io(fd, RLT_NET_OUT, len, flags, to, tolen, op_sendto, &c, NULL);
}

static ssize_t net_write(int fd, const void *buf, size_t len)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_write(fd, buf, len);
	struct buf_ctx c = {buf, 0, NULL, 0, NULL, NULL};
	return rlt_pre_net_io(fd, RLT_NET_OUT, len, 0, NULL, 0, op_write, &c, NULL);
}

static ssize_t net_recv(int fd, void *buf, size_t len, int flags)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_recv(fd, buf, len, flags);
	struct buf_ctx c = {buf, flags, NULL, 0, NULL, NULL};
	struct iovec v = {buf, len};
	struct rlt_pre_net_into in = {&v, 1, NULL};
	return rlt_pre_net_io(fd, RLT_NET_IN, len, flags, NULL, 0, op_recv, &c, &in);
}

static ssize_t net_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *fromlen)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_recvfrom(fd, buf, len, flags, from, fromlen);
	struct buf_ctx c = {buf, flags, NULL, 0, from, fromlen};
	struct iovec v = {buf, len};
	struct rlt_pre_net_into in = {&v, 1, NULL};
	/* the source is known once the datagram came: net_io reads it after the call */
	return rlt_pre_net_io(fd, RLT_NET_IN, len, flags, fromlen ? from : NULL,
	              fromlen ? *fromlen : 0, op_recvfrom, &c, &in);
}

static ssize_t net_read(int fd, void *buf, size_t len)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_read(fd, buf, len);
	struct buf_ctx c = {buf, 0, NULL, 0, NULL, NULL};
	struct iovec v = {buf, len};
	struct rlt_pre_net_into in = {&v, 1, NULL};
	return rlt_pre_net_io(fd, RLT_NET_IN, len, 0, NULL, 0, op_read, &c, &in);
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
	return rlt_pre_true_sendfile(fd, f->in, f->off, len);
}

static ssize_t net_sendfile(int out, int in, off_t *off, size_t count)
{
	if (rlt_pre_net_untouched(out))
		return rlt_pre_true_sendfile(out, in, off, count);
	struct file_ctx c = {in, off};
	return rlt_pre_net_io(out, RLT_NET_OUT, count, 0, NULL, 0, op_sendfile, &c, NULL);
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
		return m->out ? rlt_pre_true_writev(fd, piece, k) : rlt_pre_true_readv(fd, piece, k);
	struct msghdr h = *m->msg;
	h.msg_iov = piece;
	h.msg_iovlen = (size_t)k;
	if (off > 0) { /* ancillary data goes with the first piece only */
		h.msg_control = NULL;
		h.msg_controllen = 0;
	}
	if (m->out)
		return rlt_pre_true_sendmsg(fd, &h, m->flags);
	ssize_t n = rlt_pre_true_recvmsg(fd, &h, m->flags);
	m->msg->msg_namelen = h.msg_namelen;
	m->msg->msg_controllen = h.msg_controllen;
	m->msg->msg_flags = h.msg_flags;
	return n;
}

static ssize_t op_msg(void *c, int fd, size_t off, size_t len)
{
	struct msg_ctx *m = c;

	if (off == 0 && len == rlt_pre_iov_total(m->iov, m->cnt)) /* the whole message */
		return m->vec ? (m->out ? rlt_pre_true_writev(fd, m->iov, m->cnt) : rlt_pre_true_readv(fd, m->iov, m->cnt))
		              : (m->out ? rlt_pre_true_sendmsg(fd, m->msg, m->flags)
		                        : rlt_pre_true_recvmsg(fd, m->msg, m->flags));
	return op_msg_part(m, fd, off, len);
}

static ssize_t msg_io(int fd, struct msghdr *msg, const struct iovec *iov, int cnt, int flags,
                      int vec, int out)
{
	struct msg_ctx c = {msg, iov, cnt, flags, vec, out};
	struct rlt_pre_net_into in = {iov, cnt, vec ? NULL : msg};
	if (cnt < 0 || cnt > RLT_IOV_PIECE_MAX)
		return vec ? (out ? rlt_pre_true_writev(fd, iov, cnt) : rlt_pre_true_readv(fd, iov, cnt))
		           : (out ? rlt_pre_true_sendmsg(fd, msg, flags) : rlt_pre_true_recvmsg(fd, msg, flags));
	return rlt_pre_net_io(fd, out ? RLT_NET_OUT : RLT_NET_IN, rlt_pre_iov_total(iov, cnt), flags,
	              msg && msg->msg_name && (out || msg->msg_namelen) ? msg->msg_name : NULL,
	              msg && msg->msg_name ? msg->msg_namelen : 0, op_msg, &c, out ? NULL : &in);
}

static ssize_t net_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!msg || rlt_pre_net_untouched(fd))
		return rlt_pre_true_sendmsg(fd, msg, flags);
	return msg_io(fd, (struct msghdr *)msg, msg->msg_iov, (int)msg->msg_iovlen, flags, 0, 1);
}

static ssize_t net_recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (!msg || rlt_pre_net_untouched(fd))
		return rlt_pre_true_recvmsg(fd, msg, flags);
	ssize_t n = msg_io(fd, msg, msg->msg_iov, (int)msg->msg_iovlen, flags, 0, 0);
	if (n >= 0)
		rlt_pre_latency_hide_stamps(fd, msg);
	return n;
}

static ssize_t net_writev(int fd, const struct iovec *iov, int cnt)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_writev(fd, iov, cnt);
	return msg_io(fd, NULL, iov, cnt, 0, 1, 1);
}

static ssize_t net_readv(int fd, const struct iovec *iov, int cnt)
{
	if (rlt_pre_net_untouched(fd))
		return rlt_pre_true_readv(fd, iov, cnt);
	return msg_io(fd, NULL, iov, cnt, 0, 1, 0);
}

/* preadv2 and pwritev2 on a socket with offset -1 are a readv and a writev (RWF_NOWAIT: a
 * non-blocking recvmsg and sendmsg); any other offset or flag is the kernel's to answer (ESPIPE
 * or EOPNOTSUPP on a socket), and a file's call is its own. */
static int socket_vec(int fd, int cnt, off_t off, int flags)
{
	return off == -1 && !(flags & ~RWF_NOWAIT) && cnt >= 0 && rlt_pre_net_entry(fd);
}

/* A socket's preadv2 or pwritev2 (socket_vec) the way of its plain form. */
static ssize_t vec_io(int fd, const struct iovec *iov, int cnt, int flags, int out)
{
	if (!flags)
		return msg_io(fd, NULL, iov, cnt, 0, 1, out); /* readv's or writev's */
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt};
	return out ? net_sendmsg(fd, &h, MSG_DONTWAIT) : net_recvmsg(fd, &h, MSG_DONTWAIT);
}

static ssize_t net_preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (rlt_pre_net_untouched(fd) || !socket_vec(fd, cnt, off, flags))
		return rlt_pre_true_preadv2(fd, iov, cnt, off, flags);
	return vec_io(fd, iov, cnt, flags, 0);
}

static ssize_t net_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (rlt_pre_net_untouched(fd) || !socket_vec(fd, cnt, off, flags))
		return rlt_pre_true_pwritev2(fd, iov, cnt, off, flags);
	return vec_io(fd, iov, cnt, flags, 1);
}

/* sendmmsg and recvmmsg on a socket the conditions touch: message by message, each through
 * sendmsg's or recvmsg's way (a datagram drawn for loss, or held until its time; a stream's
 * hang, reset, slice, or its delay line first). A receive's first message waits as the call's
 * flags say, the rest only if already due (as with MSG_WAITFORONE; the timeout is not applied).
 * The count moved, or -1 when the first fails; a stream's short send or end ends the batch. */
static int batch_io(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, int out)
{
	unsigned i = 0;

	if (vlen > 1024)
		vlen = 1024; /* UIO_MAXIOV: the kernel caps it the same way */
	while (i < vlen) {
		struct msghdr *h = &vec[i].msg_hdr;
		int err = errno;
		ssize_t n = out ? net_sendmsg(fd, h, flags)
		                : net_recvmsg(fd, h, i ? flags | MSG_DONTWAIT : flags);
		if (n < 0) {
			if (!i)
				return -1;
			errno = err; /* what moved: its count, as the kernel's */
			break;
		}
		vec[i++].msg_len = (unsigned)n;
		if (out ? (size_t)n < rlt_pre_iov_total(h->msg_iov, (int)h->msg_iovlen) : n == 0)
			break;
	}
	return (int)i;
}

static int net_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	if (!vec || vlen == 0 || rlt_pre_net_untouched(fd))
		return rlt_pre_true_sendmmsg(fd, vec, vlen, flags);
	return batch_io(fd, vec, vlen, flags, 1);
}

static int net_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                        struct timespec *timeout)
{
	if (!vec || vlen == 0 || rlt_pre_net_untouched(fd)) {
		int got = rlt_pre_true_recvmmsg(fd, vec, vlen, flags, timeout);
		for (int k = 0; k < got; k++)
			rlt_pre_latency_hide_stamps(fd, &vec[k].msg_hdr);
		return got;
	}
	/* a peek looks at one */
	return batch_io(fd, vec, (flags & MSG_PEEK) ? 1 : vlen, flags & ~MSG_WAITFORONE, 0);
}

/* fd's socket held whole by the waits until t (fdtable.h until): its completion, errors and
 * hang-ups come then. */
static void hold_until(int fd, rlt_ns_t t)
{
	struct rlt_pre_fd *r = rlt_pre_fd_get(fd);

	if (r && atomic_load_explicit(&r->kind, memory_order_acquire) == RLT_FD_SOCKET) {
		rlt_ns_t u = atomic_load_explicit(&r->until, memory_order_relaxed);
		if (t > u)
			atomic_store_explicit(&r->until, t, memory_order_release);
		rlt_pre_fd_hold_whole(fd);
	}
}

/* The delay latency puts on a connect to peer on fd (0: none). A non-blocking one's socket is
 * held whole until then (the waits report its completion then); a blocking one sleeps it
 * once connected (the caller). */
static rlt_ns_t latency_of_connect(int fd, struct rlt_pre_net_fd *e, const struct rlt__peer *peer)
{
	struct rlt__peer was = e->s.peer;

	/* the conditions of the peer it connects to (chosen again at the next call either way) */
	e->s.peer = *peer;
	e->s.gen = 0;
	const struct rlt__net_set *set = rlt_pre_net_conditions(e);
	const struct rlt__net_cond *c = set ? rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN)
	                                    : NULL;
	rlt_ns_t now = rlt__now(), lat = c ? rlt__net_latency_due(c, &e->s.rng, now, 0) - now : 0;
	if (c)
		rlt_pre_latency_stamps_on(fd, e); /* before any data can come */
	if (!c) {
		e->s.peer = was;
		e->s.gen = 0;
	}
	if (lat && rlt_pre_net_nonblocking(fd, 0)) {
		hold_until(fd, now + lat);
		return 0; /* nothing to sleep */
	}
	return lat;
}

/* A non-blocking connect under connect=timeout: no attempt is made (a black hole answers
 * nothing, and the server must not see one). The waits hold the socket until `after` has
 * passed, then the kernel reports the unconnected socket writable, and SO_ERROR
 * (net_getsockopt) or a second connect() says ETIMEDOUT, as the kernel's own timeout would. */
static int black_hole(int fd, struct rlt_pre_net_fd *e, uint64_t after)
{
	rlt_ns_t now = rlt__now();
	rlt_ns_t until = after > RLT_NS_NEVER - now ? RLT_NS_NEVER - 1 : now + after;

	atomic_store_explicit(&e->black_until, until, memory_order_release);
	hold_until(fd, until);
	return rlt_pre_fail(EINPROGRESS);
}

/* The outcome of a black hole's attempt on e now: 0 (none, or no longer: told already),
 * EALREADY while it lasts, ETIMEDOUT once when it is over (counted then). */
static int black_hole_outcome(struct rlt_pre_net_fd *e)
{
	rlt_ns_t until = atomic_load_explicit(&e->black_until, memory_order_acquire);

	if (!until)
		return 0;
	if (rlt__now() < until)
		return EALREADY;
	if (!atomic_compare_exchange_strong(&e->black_until, &until, 0))
		return 0;
	atomic_fetch_add_explicit(&rlt__net_counts->timeouts, 1, memory_order_relaxed);
	return ETIMEDOUT;
}

static int net_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct rlt_pre_net_fd *e;

	if (level != SOL_SOCKET || name != SO_ERROR || !val || !len || *len < (socklen_t)sizeof(int) ||
	    rlt__internal || !(e = rlt_pre_net_entry(fd)) ||
	    !atomic_load_explicit(&e->black_until, memory_order_relaxed))
		return rlt_pre_true_getsockopt(fd, level, name, val, len);
	int err = black_hole_outcome(e);
	*(int *)val = err == EALREADY ? 0 : err; /* 0 while in progress, as the kernel says */
	*len = sizeof(int);
	return 0;
}

/* connect=refuse fails at once; connect=timeout holds a blocking connect DUR (a black hole
 * answers nothing) then fails ETIMEDOUT, without connecting; a non-blocking one is told
 * EINPROGRESS and its outcome comes then (black_hole). */
static int net_connect(int fd, const struct sockaddr *sa, socklen_t len)
{
	struct rlt_pre_net_fd *e = rlt_pre_net_entry(fd);
	struct rlt__peer peer;
	const struct rlt__net_set *set;
	uint64_t after = 0;

	if (!e || rlt__internal || !sa || len < (socklen_t)sizeof(sa_family_t) ||
	    sa->sa_family == AF_UNSPEC)
		return rlt_pre_true_connect(fd, sa, len);
	/* a connect() that asks how a black hole's attempt went */
	int was = black_hole_outcome(e);
	if (was)
		return rlt_pre_fail(was);
	rlt__peer_from_sockaddr(&peer, sa, len);
	if (e->s.af == AF_UNIX)
		peer.af = AF_UNIX;
	set = rlt_pre_net_conditions(e);
	if (set) {
		int f = rlt__net_connect_fault(set, e->s.af, &peer, &e->s.rng, &after);
		if (f == RLT_NET_REFUSE) {
			atomic_fetch_add_explicit(&rlt__net_counts->refused, 1, memory_order_relaxed);
			return rlt_pre_fail(ECONNREFUSED);
		}
		if (f == RLT_NET_TIMEOUT && rlt_pre_net_nonblocking(fd, 0)) {
			return black_hole(fd, e, after);
		} else if (f == RLT_NET_TIMEOUT) {
			atomic_fetch_add_explicit(&rlt__net_counts->timeouts, 1, memory_order_relaxed);
			rlt__sleep_until(rlt__now() + after);
			return rlt_pre_fail(ETIMEDOUT);
		}
	}
	/* latency: the connection's completion reaches the program DUR after its host. A
	 * non-blocking connect's socket is held (hook_connect.c's hold) before the attempt
	 * starts, so that no thread asleep in a wait is told first. */
	rlt_ns_t lat = latency_of_connect(fd, e, &peer);
	int rc = rlt_pre_true_connect(fd, sa, len);
	int err = errno;
	if (lat && rc == 0)
		rlt__sleep_until(rlt__now() + lat);
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
	int fd = rlt_pre_true_socket(d, t, p);
	if (fd >= 0 && (unsigned)fd < rlt_pre_net_tab_n) {
		struct rlt_pre_net_fd *e = &rlt_pre_net_tab[fd];
		atomic_store_explicit(&e->kind, RLT_PRE_FD_BUSY, memory_order_relaxed);
		rlt_pre_net_open(e, fd, d, (t & 0xf) == SOCK_STREAM, NULL);
		atomic_store_explicit(&e->kind, RLT_PRE_FD_SOCKET, memory_order_release);
	}
	return fd;
}

/* An accepted connection opens now: classified at once, so that after=DUR counts from here. */
static int accepted(int fd)
{
	if (fd >= 0) {
		rlt_pre_net_forget(fd);
		struct rlt_pre_net_fd *e = rlt_pre_net_entry(fd);
		const struct rlt__net_set *set = e ? rlt_pre_net_conditions(e) : NULL;
		/* latency: its data's arrival from the first byte */
		if (set && rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN))
			rlt_pre_latency_stamps_on(fd, e);
	}
	return fd;
}

static int net_accept(int fd, struct sockaddr *a, socklen_t *n)
{
	return accepted(rlt_pre_true_accept(fd, a, n));
}

static int net_accept4(int fd, struct sockaddr *a, socklen_t *n, int fl)
{
	return accepted(rlt_pre_true_accept4(fd, a, n, fl));
}

static int net_close(int fd)
{
	rlt_pre_net_forget(fd);
	return rlt_pre_true_close(fd);
}

static int net_dup2(int o, int n)
{
	int rc = rlt_pre_true_dup2(o, n);
	if (rc >= 0 && o != n)
		rlt_pre_net_forget(rc);
	return rc;
}

/* splice from a stream whose delay line holds data: that data first (net_delay.c). */
static ssize_t net_splice(int in, loff_t *oi, int out, loff_t *oo, size_t len, unsigned fl)
{
	ssize_t ret;

	if (!oi && rlt_pre_net_splice_in(in, out, len, fl, &ret))
		return ret;
	return rlt_pre_true_splice(in, oi, out, oo, len, fl);
}

static int net_dup3(int o, int n, int fl)
{
	int rc = rlt_pre_true_dup3(o, n, fl);
	if (rc >= 0)
		rlt_pre_net_forget(rc);
	return rc;
}

void rlt_pre_net_swap(void)
{
#define NET_SWAP(name)                                                                           \
	rlt_pre_true_##name = real_##name;                                                      \
	real_##name = net_##name;
	NET_CALLS(NET_SWAP)
#undef NET_SWAP
}
