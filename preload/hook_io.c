/*
 * hook_io.c: sending and receiving (RLT_SEND, RLT_RECV). Every entry point the C library has
 * for moving data on a socket, because a program reaches the kernel through whichever it likes
 * and none of them funnels into another that we could see.
 *
 * A blocking stream send no larger than what can go whole (rlt__whole: the burst) is charged
 * whole, waited for, and made as one real call: threads that share a socket rely on a send the
 * kernel would take whole not being torn by another thread's. A larger one goes out piece by
 * piece, each when the budget allows, and returns when all of it has gone; so do sendfile and
 * splice, which may always return less. A non-blocking send sends what the budget allows
 * (waiting for one piece at the least, so an event loop never spins on an EAGAIN of ours). A
 * stream receive asks the kernel for no more than its piece. Datagrams are never
 * split: a send is charged whole before it is made, a receive whole after it arrived (its size
 * is not known before), delaying its return to the program.
 */
#include <limits.h>
#include <string.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "clock.h"
#include "iov.h"
#include "preload.h"

extern void __chk_fail(void) __attribute__((noreturn));
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                       struct sockaddr *from, socklen_t *fromlen);

/* The fd's entry when a rule of var may apply to it; NULL sends the call straight through
 * (a file, a pipe, a socket no rule matches, or no rule at all for var: one load each). */
static inline struct rlt__fd *socket_for(int fd, enum rlt_var var)
{
	struct rlt__fd *e;

	if (!(rlt__vars_in_use & (1u << var)) ||
	    !atomic_load_explicit(&rlt__active, memory_order_acquire) || rlt__internal)
		return NULL;
	e = rlt__fd_get(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET)
		return NULL;
	return e;
}

static inline int is_dgram(const struct rlt__fd *e)
{
	return e->type != SOCK_STREAM;
}

/* The rules for a datagram sent to an explicit address on an unconnected socket. */
static uint32_t mask_to(struct rlt__fd *e, enum rlt_var var, const struct sockaddr *sa,
                        socklen_t len)
{
	struct rlt__peer p;

	if (!sa || e->peer.af)
		return e->mask[var];
	rlt__peer_from_sockaddr(&p, sa, len);
	if (p.af == 0)
		return e->mask[var];
	return rlt__match(&rlt__rules, var, &p);
}

/* ----- pieces of a message described by an iovec array ----- */

#define IOV_PIECE_MAX 1024 /* IOV_MAX on Linux */

/* The part [off, off + len) of iov, in at most IOV_PIECE_MAX entries. */
static int iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
                     struct iovec out[IOV_PIECE_MAX])
{
	size_t missing;
	return (int)rlt__iov_slice(iov, cnt < 0 ? 0 : (size_t)cnt, off, len, out, IOV_PIECE_MAX,
	                           &missing);
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			return SSIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}

/* One real call moving bytes [off, off + len) of the message, with extra flags. */
typedef ssize_t (*piece_fn)(void *ctx, size_t off, size_t len);

/* ----- streams ----- */

/*
 * A blocking stream receive under rules that admit every charge (rlt__always_admits): the
 * piece is received first, as the program asked (blocking, with its SO_RCVTIMEO and its
 * signal semantics), then charged and waited for. A receive that waits for data then holds
 * no reservation: a hundred threads blocked on idle connections would otherwise hold a
 * hundred pieces of the budget and hold up the busy ones. What arrives early waits in the
 * program's buffer, at most one piece (10 ms of the rate) ahead of the rate.
 */
static ssize_t recv_then_charge(struct rlt__fd *e, uint32_t mask, size_t total, int waitall,
                                piece_fn fn, void *ctx)
{
	uint64_t piece_max = rlt__piece(&rlt__rules, RLT_VAR_RECV, mask);
	size_t done = 0;

	do {
		struct rlt__ticket t;
		size_t want = total - done, piece = want < piece_max ? want : (size_t)piece_max;
		ssize_t n = fn(ctx, done, piece);
		if (n <= 0)
			return done ? (ssize_t)done : n; /* the end of the stream, or its errno */
		int err = errno;
		/* the clock is read after the call: a reading from before it would date the charge
		 * back by as long as the call waited for data, and give that time away */
		/* MSG_WAITALL: data has moved, so a handler that runs ends the call with it */
		int intr = waitall ? rlt__charge_wait_intr(&rlt__rules, &t, RLT_VAR_RECV, mask,
		                                           rlt__conn_states(e), (uint64_t)n,
		                                           done == 0, rlt__now())
		                   : rlt__charge_wait_at(&rlt__rules, &t, RLT_VAR_RECV, mask,
		                                         rlt__conn_states(e), (uint64_t)n,
		                                         done == 0, rlt__now());
		rlt__settle(&rlt__rules, &t, (uint64_t)n, done == 0);
		errno = err;
		done += (size_t)n;
		if ((size_t)n < piece || !waitall || intr > 0)
			break;
	} while (done < total);
	return (ssize_t)done;
}

/* A piece made as blocking came back with EAGAIN, or a send's short (splice and sendfile often
 * are, and are not asked): perhaps another process that shares the open file set O_NONBLOCK on
 * it (the F_SETFL hook sees only ours). One system call, on that path only, learns it. */
static void learn_nonblock(int fd, struct rlt__fd *e)
{
	int saved = errno, fl = real_fcntl(fd, F_GETFL);

	if (fl >= 0 && (fl & O_NONBLOCK))
		rlt__fd_set_nonblock(e, 1);
	errno = saved;
}

/* keep_whole: a send made by send, sendto, write, sendmsg or writev, which goes out in one
 * real call when it is small enough (rlt__whole); sendfile and splice move in pieces. */
static ssize_t stream_io(int fd, struct rlt__fd *e, enum rlt_var var, uint32_t mask, size_t total,
                         int nonblock, int waitall, int keep_whole, piece_fn fn, void *ctx)
{
	void *states = rlt__conn_states(e);
	uint64_t piece_max = rlt__piece(&rlt__rules, var, mask);
	int rejects = rlt__rejects(&rlt__rules, var, mask);
	size_t done = 0;

	if (total == 0)
		return fn(ctx, 0, 0);
	if (keep_whole && total <= rlt__whole(&rlt__rules, var, mask, nonblock))
		piece_max = total;
	if (var == RLT_VAR_RECV && !nonblock && rlt__always_admits(&rlt__rules, var, mask))
		return recv_then_charge(e, mask, total, waitall, fn, ctx);
	do {
		struct rlt__ticket t;
		size_t want = total - done, piece = want < piece_max ? want : (size_t)piece_max;
		rlt_ns_t now = rlt__now();

		if (var == RLT_VAR_RECV) {
			/* Ask the kernel for no more than the budget allows now. What trickled
			 * in during the last system call is not worth a call of its own: taking
			 * it would read a few bytes at a time at full CPU. Below half a piece a
			 * delay rule waits for a whole one; a reject rule takes what there is. */
			uint64_t a = rlt__available(&rlt__rules, var, mask, states, now);
			if (a < piece && (a >= piece / 2 || (a && rejects)))
				piece = (size_t)a;
		} else if (nonblock) {
			/* what the budget allows now, if that is at least one piece */
			uint64_t a = rlt__available(&rlt__rules, var, mask, states, now);
			if (a > piece)
				piece = a < want ? (size_t)a : want;
		}
		/* Once data has moved, a handler that runs during the wait ends the call with the
		 * count moved, as the kernel's own blocking call would (SA_RESTART or not): a
		 * program checks its signals between calls (Python's sendall), and must not wait
		 * for the whole throttled transfer first. Before any data, the wait goes on. */
		int w = done ? rlt__charge_wait_intr(&rlt__rules, &t, var, mask, states, piece, 0,
		                                     now)
		             : rlt__charge_wait_at(&rlt__rules, &t, var, mask, states, piece, 1, now);
		if (w < 0) {
			if (done)
				return (ssize_t)done;
			return rlt__fail(t.err);
		}
		if (w > 0) {
			rlt__settle(&rlt__rules, &t, 0, 0);
			return (ssize_t)done;
		}
		ssize_t n = fn(ctx, done, piece);
		int err = errno;
		rlt__settle(&rlt__rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0 && done == 0);
		if (!nonblock && ((n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) ||
		                  (keep_whole && var == RLT_VAR_SEND && n >= 0 && (size_t)n < piece)))
			learn_nonblock(fd, e);
		if (n < 0) {
			if (done)
				return (ssize_t)done;
			errno = err;
			return -1;
		}
		done += (size_t)n;
		/* a short piece: the kernel took or had no more (non-blocking, end of stream, or a
		 * signal); a receive returns what it has unless MSG_WAITALL asked for everything */
		if ((size_t)n < piece || n == 0)
			break;
		if (var == RLT_VAR_RECV && !waitall)
			break;
		if (var == RLT_VAR_SEND && nonblock)
			break;
	} while (done < total);
	return (ssize_t)done;
}

/* ----- datagrams ----- */

/* After a datagram arrived: charge it whole and hold it until its slot. A reject rule that
 * does not admit it fails the call and the datagram is dropped, as a policer drops a packet. */
static ssize_t dgram_received(struct rlt__fd *e, uint32_t mask, ssize_t n, uint64_t bytes,
                              uint64_t msgs)
{
	struct rlt__ticket t;

	if (n < 0 || !mask)
		return n;
	int saved = errno;
	if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_RECV, mask, rlt__conn_states(e), bytes,
	                     msgs) != 0)
		return rlt__fail(t.err);
	rlt__settle(&rlt__rules, &t, bytes, msgs);
	errno = saved;
	return n;
}

/* ===== send side ===== */

struct buf_ctx {
	int fd;
	const char *buf;
	int flags;
	const struct sockaddr *to;
	socklen_t tolen;
	int use_write;
};

static ssize_t buf_send_piece(void *c, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	if (b->use_write)
		return real_write(b->fd, b->buf + off, len);
	return real_sendto(b->fd, b->buf + off, len, b->flags, b->to, b->tolen);
}

static ssize_t send_buf(int fd, const void *buf, size_t len, int flags,
                        const struct sockaddr *to, socklen_t tolen, int use_write)
{
	struct rlt__fd *e = socket_for(fd, RLT_VAR_SEND);
	struct buf_ctx c = {fd, buf, flags, to, tolen, use_write};

	if (!e)
		return use_write ? real_write(fd, buf, len) : real_sendto(fd, buf, len, flags, to, tolen);
	uint32_t mask = is_dgram(e) ? mask_to(e, RLT_VAR_SEND, to, tolen) : e->mask[RLT_VAR_SEND];
	if (!mask)
		return use_write ? real_write(fd, buf, len) : real_sendto(fd, buf, len, flags, to, tolen);
	if (is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_SEND, mask, rlt__conn_states(e), len,
		                     1) != 0)
			return rlt__fail(t.err);
		ssize_t n = buf_send_piece(&c, 0, len);
		int err = errno;
		rlt__settle(&rlt__rules, &t, n >= 0 ? len : 0, n >= 0);
		errno = err;
		return n;
	}
	return stream_io(fd, e, RLT_VAR_SEND, mask, len, e->nonblock || (flags & MSG_DONTWAIT), 0,
	                 1, buf_send_piece, &c);
}

RLT_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	rlt__ensure_real();
	return send_buf(fd, buf, len, flags, NULL, 0, 0);
}

RLT_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *to, socklen_t tolen)
{
	rlt__ensure_real();
	return send_buf(fd, buf, len, flags, to, tolen, 0);
}

RLT_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	rlt__ensure_real();
	return send_buf(fd, buf, len, 0, NULL, 0, 1);
}

struct msg_ctx {
	int fd;
	const struct msghdr *msg;
	int flags;
	int use_writev; /* writev/readv rather than sendmsg/recvmsg */
};

static ssize_t msg_send_piece(void *c, size_t off, size_t len)
{
	struct msg_ctx *m = c;
	struct iovec iov[IOV_PIECE_MAX];
	struct msghdr h = *m->msg;

	h.msg_iovlen = (size_t)iov_slice(m->msg->msg_iov, (int)m->msg->msg_iovlen, off, len, iov);
	h.msg_iov = iov;
	if (m->use_writev)
		return real_writev(m->fd, iov, (int)h.msg_iovlen);
	/* ancillary data (passed fds, credentials) goes with the first piece only */
	if (off > 0) {
		h.msg_control = NULL;
		h.msg_controllen = 0;
	}
	return real_sendmsg(m->fd, &h, m->flags);
}

static ssize_t send_msg(int fd, const struct msghdr *msg, int flags, int use_writev)
{
	struct rlt__fd *e = socket_for(fd, RLT_VAR_SEND);
	struct msg_ctx c = {fd, msg, flags, use_writev};
	uint32_t mask;

	if (!e || !msg || (int)msg->msg_iovlen < 0 || msg->msg_iovlen > IOV_PIECE_MAX)
		goto straight;
	mask = is_dgram(e) ? mask_to(e, RLT_VAR_SEND, msg->msg_name, msg->msg_namelen)
	                   : e->mask[RLT_VAR_SEND];
	if (!mask)
		goto straight;
	size_t total = iov_total(msg->msg_iov, (int)msg->msg_iovlen);
	if (is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_SEND, mask, rlt__conn_states(e),
		                     total, 1) != 0)
			return rlt__fail(t.err);
		ssize_t n = use_writev ? real_writev(fd, msg->msg_iov, (int)msg->msg_iovlen)
		                       : real_sendmsg(fd, msg, flags);
		int err = errno;
		rlt__settle(&rlt__rules, &t, n >= 0 ? total : 0, n >= 0);
		errno = err;
		return n;
	}
	return stream_io(fd, e, RLT_VAR_SEND, mask, total, e->nonblock || (flags & MSG_DONTWAIT),
	                 0, 1, msg_send_piece, &c);
straight:
	return use_writev ? real_writev(fd, msg->msg_iov, (int)msg->msg_iovlen)
	                  : real_sendmsg(fd, msg, flags);
}

RLT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	rlt__ensure_real();
	return send_msg(fd, msg, flags, 0);
}

RLT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt__ensure_real();
	if (cnt < 0 || !socket_for(fd, RLT_VAR_SEND))
		return real_writev(fd, iov, cnt);
	return send_msg(fd, &h, 0, 1);
}

/* sendmmsg: several messages in one call, charged together (bytes and message count); what the
 * kernel did not send is given back. On a stream socket it is charged the same way, unsplit. */
RLT_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	struct rlt__fd *e;
	struct rlt__ticket t;
	uint64_t bytes = 0;
	uint32_t mask;

	rlt__ensure_real();
	e = socket_for(fd, RLT_VAR_SEND);
	if (!e || !vec || vlen == 0)
		return real_sendmmsg(fd, vec, vlen, flags);
	mask = vec[0].msg_hdr.msg_name && !e->peer.af
	               ? mask_to(e, RLT_VAR_SEND, vec[0].msg_hdr.msg_name,
	                         vec[0].msg_hdr.msg_namelen)
	               : e->mask[RLT_VAR_SEND];
	if (!mask)
		return real_sendmmsg(fd, vec, vlen, flags);
	if (vlen > 1024)
		vlen = 1024; /* UIO_MAXIOV: the kernel caps it the same way */
	for (unsigned i = 0; i < vlen; i++)
		bytes += iov_total(vec[i].msg_hdr.msg_iov, (int)vec[i].msg_hdr.msg_iovlen);
	if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_SEND, mask, rlt__conn_states(e), bytes,
	                     vlen) != 0)
		return rlt__fail(t.err);
	int n = real_sendmmsg(fd, vec, vlen, flags);
	int err = errno;
	uint64_t sent = 0;
	for (int i = 0; i < n; i++)
		sent += vec[i].msg_len;
	rlt__settle(&rlt__rules, &t, sent, n > 0 ? (uint64_t)n : 0);
	errno = err;
	return n;
}

struct file_ctx {
	int out, in;
	off_t *off;
};

static ssize_t sendfile_piece(void *c, size_t off, size_t len)
{
	struct file_ctx *f = c;
	(void)off; /* the kernel advances the offset (or the file position) itself */
	return real_sendfile(f->out, f->in, f->off, len);
}

RLT_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	struct rlt__fd *e;
	struct file_ctx c = {out, in, off};

	rlt__ensure_real();
	e = socket_for(out, RLT_VAR_SEND);
	if (!e || !e->mask[RLT_VAR_SEND])
		return real_sendfile(out, in, off, count);
	if (is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_SEND, e->mask[RLT_VAR_SEND],
		                     rlt__conn_states(e), count, 1) != 0)
			return rlt__fail(t.err);
		ssize_t n = real_sendfile(out, in, off, count);
		int err = errno;
		rlt__settle(&rlt__rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0);
		errno = err;
		return n;
	}
	return stream_io(out, e, RLT_VAR_SEND, e->mask[RLT_VAR_SEND], count, e->nonblock, 0, 0,
	                 sendfile_piece, &c);
}

/* off64_t and off_t are one type on the 64-bit ABIs we build for. */
struct splice_ctx {
	int in, out;
	loff_t *off_in, *off_out;
	unsigned flags;
};

static ssize_t splice_piece(void *c, size_t off, size_t len)
{
	struct splice_ctx *s = c;
	(void)off; /* the kernel moves the offsets (or the file positions) itself */
	return real_splice(s->in, s->off_in, s->out, s->off_out, len, s->flags);
}

/*
 * splice moves bytes between a pipe and a file or socket without a copy (Go's io.Copy between
 * two TCP connections, HAProxy, proxies). One end is a pipe, so at most one is a socket: a
 * stream socket is paced as a send or a receive of the same length (pieces, each when the
 * budget allows; splice may always return less than asked, and callers loop); a datagram
 * socket's send is charged whole.
 */
RLT_EXPORT ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t len,
                          unsigned flags)
{
	struct splice_ctx c = {in, out, off_in, off_out, flags};
	struct rlt__fd *e;
	enum rlt_var var = RLT_VAR_SEND;

	rlt__ensure_real();
	e = socket_for(out, RLT_VAR_SEND);
	if (!e || !e->mask[RLT_VAR_SEND]) {
		var = RLT_VAR_RECV;
		e = socket_for(in, RLT_VAR_RECV);
		if (!e || !e->mask[RLT_VAR_RECV] || is_dgram(e))
			return real_splice(in, off_in, out, off_out, len, flags);
	}
	if (is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait(&rlt__rules, &t, RLT_VAR_SEND, e->mask[RLT_VAR_SEND],
		                     rlt__conn_states(e), len, 1) != 0)
			return rlt__fail(t.err);
		ssize_t n = real_splice(in, off_in, out, off_out, len, flags);
		int err = errno;
		rlt__settle(&rlt__rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0);
		errno = err;
		return n;
	}
	return stream_io(var == RLT_VAR_SEND ? out : in, e, var, e->mask[var], len, e->nonblock, 0,
	                 0, splice_piece, &c);
}

RLT_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	_Static_assert(sizeof(off64_t) == sizeof(off_t), "sendfile64 is sendfile here");
	return sendfile(out, in, (off_t *)off, count);
}

/* ===== receive side ===== */

struct rbuf_ctx {
	int fd;
	char *buf;
	int flags;
	struct sockaddr *from;
	socklen_t *fromlen;
	int use_read;
};

static ssize_t buf_recv_piece(void *c, size_t off, size_t len)
{
	struct rbuf_ctx *b = c;
	if (b->use_read)
		return real_read(b->fd, b->buf + off, len);
	/* the sender's address belongs to the first piece */
	return real_recvfrom(b->fd, b->buf + off, len, b->flags, off ? NULL : b->from,
	                     off ? NULL : b->fromlen);
}

static ssize_t recv_buf(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                        socklen_t *fromlen, int use_read)
{
	struct rlt__fd *e = socket_for(fd, RLT_VAR_RECV);
	struct rbuf_ctx c = {fd, buf, flags, from, fromlen, use_read};

	if (!e || (flags & MSG_PEEK))
		goto straight;
	if (is_dgram(e)) {
		/* learn the sender, to apply the rules that filter on it */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int need_addr = !e->peer.af && rlt__rules.n[RLT_VAR_RECV];
		ssize_t n;
		if (!need_addr) {
			if (!e->mask[RLT_VAR_RECV])
				goto straight;
			n = use_read ? real_read(fd, buf, len)
			             : real_recvfrom(fd, buf, len, flags, from, fromlen);
			return dgram_received(e, e->mask[RLT_VAR_RECV], n,
			                      n > 0 ? (uint64_t)n : 0, 1);
		}
		n = real_recvfrom(fd, buf, len, flags, (struct sockaddr *)&ss, &sl);
		if (n >= 0 && from && fromlen) {
			memcpy(from, &ss, *fromlen < sl ? *fromlen : sl);
			*fromlen = sl;
		}
		return dgram_received(e, mask_to(e, RLT_VAR_RECV, (struct sockaddr *)&ss, sl), n,
		                      n > 0 ? (uint64_t)n : 0, 1);
	}
	if (!e->mask[RLT_VAR_RECV])
		goto straight;
	return stream_io(fd, e, RLT_VAR_RECV, e->mask[RLT_VAR_RECV], len,
	                 e->nonblock || (flags & MSG_DONTWAIT), (flags & MSG_WAITALL) != 0, 0,
	                 buf_recv_piece, &c);
straight:
	return use_read ? real_read(fd, buf, len) : real_recvfrom(fd, buf, len, flags, from, fromlen);
}

RLT_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	rlt__ensure_real();
	return recv_buf(fd, buf, len, flags, NULL, NULL, 0);
}

RLT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *fromlen)
{
	rlt__ensure_real();
	return recv_buf(fd, buf, len, flags, from, fromlen, 0);
}

RLT_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	rlt__ensure_real();
	return recv_buf(fd, buf, len, 0, NULL, NULL, 1);
}

static ssize_t msg_recv_piece(void *c, size_t off, size_t len)
{
	struct msg_ctx *m = c;
	struct iovec iov[IOV_PIECE_MAX];
	struct msghdr *h = (struct msghdr *)m->msg;
	int cnt = iov_slice(h->msg_iov, (int)h->msg_iovlen, off, len, iov);

	if (m->use_writev)
		return real_readv(m->fd, iov, cnt);
	/* the program's msghdr receives the flags, the address and the ancillary data of the
	 * first piece; later pieces of a MSG_WAITALL receive only fill the data */
	struct msghdr piece = *h;
	piece.msg_iov = iov;
	piece.msg_iovlen = (size_t)cnt;
	if (off > 0) {
		piece.msg_name = NULL;
		piece.msg_namelen = 0;
		piece.msg_control = NULL;
		piece.msg_controllen = 0;
	}
	ssize_t n = real_recvmsg(m->fd, &piece, m->flags);
	if (off == 0) {
		h->msg_namelen = piece.msg_namelen;
		h->msg_controllen = piece.msg_controllen;
		h->msg_flags = piece.msg_flags;
	}
	return n;
}

static ssize_t recv_msg(int fd, struct msghdr *msg, int flags, int use_readv)
{
	struct rlt__fd *e = socket_for(fd, RLT_VAR_RECV);
	struct msg_ctx c = {fd, msg, flags, use_readv};

	if (!e || !msg || (flags & MSG_PEEK) || msg->msg_iovlen > IOV_PIECE_MAX)
		goto straight;
	if (is_dgram(e)) {
		ssize_t n = use_readv ? real_readv(fd, msg->msg_iov, (int)msg->msg_iovlen)
		                      : real_recvmsg(fd, msg, flags);
		uint32_t mask = !use_readv && msg->msg_name && n >= 0
		                        ? mask_to(e, RLT_VAR_RECV, msg->msg_name, msg->msg_namelen)
		                        : e->mask[RLT_VAR_RECV];
		return dgram_received(e, mask, n, n > 0 ? (uint64_t)n : 0, 1);
	}
	if (!e->mask[RLT_VAR_RECV])
		goto straight;
	return stream_io(fd, e, RLT_VAR_RECV, e->mask[RLT_VAR_RECV],
	                 iov_total(msg->msg_iov, (int)msg->msg_iovlen),
	                 e->nonblock || (flags & MSG_DONTWAIT), (flags & MSG_WAITALL) != 0, 0,
	                 msg_recv_piece, &c);
straight:
	return use_readv ? real_readv(fd, msg->msg_iov, (int)msg->msg_iovlen)
	                 : real_recvmsg(fd, msg, flags);
}

RLT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	rlt__ensure_real();
	return recv_msg(fd, msg, flags, 0);
}

RLT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt__ensure_real();
	if (cnt < 0 || !socket_for(fd, RLT_VAR_RECV))
		return real_readv(fd, iov, cnt);
	return recv_msg(fd, &h, 0, 1);
}

RLT_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                        struct timespec *timeout)
{
	struct rlt__fd *e;

	rlt__ensure_real();
	e = socket_for(fd, RLT_VAR_RECV);
	int n = real_recvmmsg(fd, vec, vlen, flags, timeout);
	if (!e || n <= 0 || (flags & MSG_PEEK) || !e->mask[RLT_VAR_RECV])
		return n;
	uint64_t bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += vec[i].msg_len;
	return (int)dgram_received(e, e->mask[RLT_VAR_RECV], n, bytes, (uint64_t)n);
}

/* glibc's _FORTIFY_SOURCE entry points: the same calls with a buffer-size check first. */
RLT_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__chk_fail();
	rlt__ensure_real();
	return recv_buf(fd, buf, len, 0, NULL, NULL, 1);
}

RLT_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__chk_fail();
	rlt__ensure_real();
	return recv_buf(fd, buf, len, flags, NULL, NULL, 0);
}

RLT_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                                  struct sockaddr *from, socklen_t *fromlen)
{
	if (len > buflen)
		__chk_fail();
	rlt__ensure_real();
	return recv_buf(fd, buf, len, flags, from, fromlen, 0);
}
