/*
 * hook_send.c: sending (RLT_SEND). Every entry point the C library has for sending on a socket
 * (send, sendto, write, sendmsg, writev, sendmmsg, sendfile, splice), because a program reaches
 * the kernel through whichever it likes and none of them funnels into another that we could
 * see. How a send is paced: io_pacing.c. Each hook asks the gate first (rlt_pre_passes, fdtable.h)
 * and jumps to the real function when the call is surely not ours; its *_slow part decides.
 */
#include <limits.h>
#include <string.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "charge.h"
#include "clock.h"
#include "fdtable.h"
#include "hook_connect.h"
#include "hook_send.h"
#include "io_pacing.h"
#include "iov.h"
#include "load.h"
#include "preload.h"
#include "real.h"


struct buf_ctx {
	int fd;
	const char *buf;
	int flags;
	const struct sockaddr *to;
	socklen_t tolen;
	int use_write;
};

static ssize_t buf_send_piece(void *c, int fd, size_t off, size_t len)
{
	struct buf_ctx *b = c;
	if (b->use_write)
		return real_write(fd, b->buf + off, len);
	/* TCP Fast Open connects with the first piece; the socket is connected for the next */
	if (off > 0 && (b->flags & MSG_FASTOPEN))
		return real_sendto(fd, b->buf + off, len, b->flags & ~MSG_FASTOPEN, NULL, 0);
	return real_sendto(fd, b->buf + off, len, b->flags, b->to, b->tolen);
}

ssize_t rlt_pre_fastopen_send(int fd, struct rlt_pre_fd *e, const struct sockaddr *to,
                              socklen_t tolen, size_t total, int flags, rlt_pre_piece_fn fn,
                              void *ctx)
{
	struct rlt_pre_attempt a;
	struct rlt__peer peer;

	rlt__peer_from_sockaddr(&peer, to, tolen);
	if (rlt_pre_attempt_begin(fd, e, &peer, e->nonblock || (flags & MSG_DONTWAIT), &a) != 0)
		return -1;
	/* the rules of the socket's peer now (rlt_pre_attempt_begin set it) */
	uint32_t mask = (rlt_pre_vars_in_use & (1u << RLT_VAR_SEND)) ? e->mask[RLT_VAR_SEND] : 0;
	ssize_t n = mask ? rlt_pre_stream_io(fd, e, RLT_VAR_SEND, mask, total,
	                                     e->nonblock || (flags & MSG_DONTWAIT), 0, 1, fn, ctx)
	                 : fn(ctx, fd, 0, total);
	rlt_pre_attempt_end(fd, e, &a, n < 0 ? -1 : 0, errno);
	return n;
}

/* The out-of-line part of send, sendto and write: the gate (rlt_pre_passes) did not let the call
 * straight through, so it may be ours. */
static ssize_t send_buf(int fd, const void *buf, size_t len, int flags,
                        const struct sockaddr *to, socklen_t tolen, int use_write)
{
	rlt_pre_ensure_real();
	struct buf_ctx c = {fd, buf, flags, to, tolen, use_write};
	struct rlt__peer dest;
	struct rlt_pre_fd *e;

	if (!use_write && (flags & MSG_FASTOPEN) &&
	    (e = rlt_pre_fastopen_socket(fd, flags, to, tolen)) != NULL)
		return rlt_pre_fastopen_send(fd, e, to, tolen, len, flags, buf_send_piece, &c);
	e = rlt_pre_socket_for(fd, RLT_VAR_SEND);

	if (!e)
		return use_write ? real_write(fd, buf, len) : real_sendto(fd, buf, len, flags, to, tolen);
	uint32_t mask = rlt_pre_is_dgram(e) ? rlt_pre_mask_to(e, RLT_VAR_SEND, to, tolen, &dest)
	                                    : e->mask[RLT_VAR_SEND];
	if (!mask)
		return use_write ? real_write(fd, buf, len) : real_sendto(fd, buf, len, flags, to, tolen);
	if (rlt_pre_is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_SEND, mask,
		                          rlt_pre_budget_states(e), rlt_pre_key_peer(e, &dest), len,
		                          1) != 0)
			return rlt_pre_fail(t.err);
		ssize_t n = buf_send_piece(&c, fd, 0, len);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n >= 0 ? len : 0, n >= 0);
		errno = err;
		return n;
	}
	return rlt_pre_stream_io(fd, e, RLT_VAR_SEND, mask, len,
	                         e->nonblock || (flags & MSG_DONTWAIT), 0,
	                         flags & RLT_PRE_UNSPLIT_FLAGS ? RLT_PRE_UNSPLIT : 1, buf_send_piece,
	                         &c);
}

/* Six arguments at most, so that a hook reaches them by a jump, without a frame of its own.
 * A send made as one real call charged whole that goes at once (the common case:
 * rlt_pre_send_charge) is made here, one call deep; one that must wait holds its socket
 * (rlt_pre_send_waited); anything else (TCP Fast Open included) takes send_buf. */
static RLT_SLOW ssize_t sendto_slow(int fd, const void *buf, size_t len, int flags,
                                    const struct sockaddr *to, socklen_t tolen)
{
	struct rlt_pre_fd *e;
	struct rlt__ticket t;
	int nonblock, rc;

	/* a socket of ours means the real symbols are there; send_buf makes sure of them */
	e = rlt_pre_socket_for(fd, RLT_VAR_SEND);
	if (e && (!to || e->peer.af) && !(flags & MSG_FASTOPEN)) {
		nonblock = e->nonblock || (flags & MSG_DONTWAIT);
		rc = rlt_pre_send_charge(e, len, nonblock, &t);
		if (__builtin_expect(rc < 0, 0))
			return -1;
		if (__builtin_expect(rc == RLT_PRE_SEND_WAIT, 0)) {
			struct buf_ctx c = {fd, buf, flags, to, tolen, 0};
			return rlt_pre_send_waited(fd, e, &t, nonblock, buf_send_piece, &c);
		}
		if (__builtin_expect(rc > 0, 1)) {
			ssize_t n = real_sendto(fd, buf, len, flags, to, tolen);
			if (__builtin_expect(rc == RLT_PRE_SENT_DONE && n == (ssize_t)len, 1))
				return n;
			return rlt_pre_sent_rest(fd, e, &t, nonblock, n);
		}
	}
	return send_buf(fd, buf, len, flags, to, tolen, 0);
}

static RLT_SLOW ssize_t write_slow(int fd, const void *buf, size_t len)
{
	struct rlt_pre_fd *e;
	struct rlt__ticket t;
	int rc;

	e = rlt_pre_socket_for(fd, RLT_VAR_SEND);
	if (e) {
		rc = rlt_pre_send_charge(e, len, e->nonblock, &t);
		if (__builtin_expect(rc < 0, 0))
			return -1;
		if (__builtin_expect(rc == RLT_PRE_SEND_WAIT, 0)) {
			struct buf_ctx c = {fd, buf, 0, NULL, 0, 1};
			return rlt_pre_send_waited(fd, e, &t, e->nonblock, buf_send_piece, &c);
		}
		if (__builtin_expect(rc > 0, 1)) {
			ssize_t n = real_write(fd, buf, len);
			if (__builtin_expect(rc == RLT_PRE_SENT_DONE && n == (ssize_t)len, 1))
				return n;
			return rlt_pre_sent_rest(fd, e, &t, e->nonblock, n);
		}
	}
	return send_buf(fd, buf, len, 0, NULL, 0, 1);
}

RLT_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)))
		return real_send(fd, buf, len, flags);
	return sendto_slow(fd, buf, len, flags, NULL, 0);
}

/* A send with MSG_FASTOPEN may be a connect (TCP Fast Open): past the gate unless no rule at
 * all exists, as connect(). */
RLT_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                          const struct sockaddr *to, socklen_t tolen)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)) &&
	    (!(flags & MSG_FASTOPEN) || rlt_pre_idle(RLT_PASS_ALL)))
		return real_sendto(fd, buf, len, flags, to, tolen);
	return sendto_slow(fd, buf, len, flags, to, tolen);
}

RLT_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)))
		return real_write(fd, buf, len);
	return write_slow(fd, buf, len);
}

static ssize_t msg_send_piece(void *c, int fd, size_t off, size_t len)
{
	struct rlt_pre_msg_ctx *m = c;
	struct iovec iov[RLT_IOV_PIECE_MAX];
	struct msghdr h = *m->msg;

	h.msg_iovlen =
		(size_t)rlt_pre_iov_slice(m->msg->msg_iov, (int)m->msg->msg_iovlen, off, len, iov);
	h.msg_iov = iov;
	if (m->use_writev)
		return real_writev(fd, iov, (int)h.msg_iovlen);
	/* ancillary data (passed fds, credentials) goes with the first piece only, and so does
	 * TCP Fast Open's address: the socket is connected for the next */
	if (off > 0) {
		h.msg_control = NULL;
		h.msg_controllen = 0;
		if (m->flags & MSG_FASTOPEN) {
			h.msg_name = NULL;
			h.msg_namelen = 0;
			return real_sendmsg(fd, &h, m->flags & ~MSG_FASTOPEN);
		}
	}
	return real_sendmsg(fd, &h, m->flags);
}

static RLT_SLOW ssize_t send_msg(int fd, const struct msghdr *msg, int flags, int use_writev)
{
	rlt_pre_ensure_real();
	struct rlt_pre_msg_ctx c = {fd, msg, flags, use_writev};
	struct rlt__peer dest;
	struct rlt_pre_fd *e;
	uint32_t mask;

	if (!use_writev && (flags & MSG_FASTOPEN) && msg && (int)msg->msg_iovlen >= 0 &&
	    msg->msg_iovlen <= RLT_IOV_PIECE_MAX &&
	    (e = rlt_pre_fastopen_socket(fd, flags, msg->msg_name, msg->msg_namelen)) != NULL)
		return rlt_pre_fastopen_send(fd, e, msg->msg_name, msg->msg_namelen,
		                             rlt_pre_iov_total(msg->msg_iov, (int)msg->msg_iovlen),
		                             flags, msg_send_piece, &c);
	e = rlt_pre_socket_for(fd, RLT_VAR_SEND);
	if (!e || !msg || (int)msg->msg_iovlen < 0 || msg->msg_iovlen > RLT_IOV_PIECE_MAX)
		goto straight;
	mask = rlt_pre_is_dgram(e) ? rlt_pre_mask_to(e, RLT_VAR_SEND, msg->msg_name,
	                                             msg->msg_namelen, &dest)
	                           : e->mask[RLT_VAR_SEND];
	if (!mask)
		goto straight;
	size_t total = rlt_pre_iov_total(msg->msg_iov, (int)msg->msg_iovlen);
	if (rlt_pre_is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_SEND, mask,
		                          rlt_pre_budget_states(e), rlt_pre_key_peer(e, &dest), total,
		                          1) != 0)
			return rlt_pre_fail(t.err);
		ssize_t n = use_writev ? real_writev(fd, msg->msg_iov, (int)msg->msg_iovlen)
		                       : real_sendmsg(fd, msg, flags);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n >= 0 ? total : 0, n >= 0);
		errno = err;
		return n;
	}
	return rlt_pre_stream_io(fd, e, RLT_VAR_SEND, mask, total,
	                         e->nonblock || (flags & MSG_DONTWAIT), 0,
	                         flags & RLT_PRE_UNSPLIT_FLAGS ? RLT_PRE_UNSPLIT : 1, msg_send_piece,
	                         &c);
straight:
	return use_writev ? real_writev(fd, msg->msg_iov, (int)msg->msg_iovlen)
	                  : real_sendmsg(fd, msg, flags);
}

RLT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)) &&
	    (!(flags & MSG_FASTOPEN) || rlt_pre_idle(RLT_PASS_ALL)))
		return real_sendmsg(fd, msg, flags);
	return send_msg(fd, msg, flags, 0);
}

static RLT_SLOW ssize_t writev_slow(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt_pre_ensure_real();
	if (cnt < 0 || !rlt_pre_socket_for(fd, RLT_VAR_SEND))
		return real_writev(fd, iov, cnt);
	return send_msg(fd, &h, 0, 1);
}

RLT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)))
		return real_writev(fd, iov, cnt);
	return writev_slow(fd, iov, cnt);
}

/* pwritev2 on a socket is a writev when its offset is -1 (any other: ESPIPE, the kernel's to
 * say), and a non-blocking one with RWF_NOWAIT; other flags mean nothing to a socket and go to
 * the kernel as they are. */
static RLT_SLOW ssize_t pwritev2_slow(int fd, const struct iovec *iov, int cnt, off_t off,
                                      int flags)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt_pre_ensure_real();
	if (cnt < 0 || off != -1 || (flags & ~RWF_NOWAIT) || !rlt_pre_socket_for(fd, RLT_VAR_SEND))
		return real_pwritev2(fd, iov, cnt, off, flags);
	return flags ? send_msg(fd, &h, MSG_DONTWAIT, 0) : send_msg(fd, &h, 0, 1);
}

RLT_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)))
		return real_pwritev2(fd, iov, cnt, off, flags);
	return pwritev2_slow(fd, iov, cnt, off, flags);
}

/* glibc's name for it under _FILE_OFFSET_BITS=64 (the same function on 64-bit) */
RLT_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return pwritev2(fd, iov, cnt, off, flags);
}

/* sendmmsg: several messages in one call, charged together (bytes and message count); what the
 * kernel did not send is given back. On a stream socket it is charged the same way, unsplit.
 * Its rules and a keyed rule's key are the first message's destination's. */
static RLT_SLOW int sendmmsg_slow(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	struct rlt_pre_fd *e;
	struct rlt__ticket t;
	struct rlt__peer dest = {.af = 0};
	uint64_t bytes = 0;
	uint32_t mask;

	rlt_pre_ensure_real();
	e = rlt_pre_socket_for(fd, RLT_VAR_SEND);
	if (!e || !vec || vlen == 0)
		return real_sendmmsg(fd, vec, vlen, flags);
	mask = vec[0].msg_hdr.msg_name && !e->peer.af
	               ? rlt_pre_mask_to(e, RLT_VAR_SEND, vec[0].msg_hdr.msg_name,
	                                 vec[0].msg_hdr.msg_namelen, &dest)
	               : e->mask[RLT_VAR_SEND];
	if (!mask)
		return real_sendmmsg(fd, vec, vlen, flags);
	if (vlen > 1024)
		vlen = 1024; /* UIO_MAXIOV: the kernel caps it the same way */
	for (unsigned i = 0; i < vlen; i++)
		bytes += rlt_pre_iov_total(vec[i].msg_hdr.msg_iov, (int)vec[i].msg_hdr.msg_iovlen);
	if (rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_SEND, mask, rlt_pre_budget_states(e),
	                          rlt_pre_key_peer(e, &dest), bytes, vlen) != 0)
		return rlt_pre_fail(t.err);
	int n = real_sendmmsg(fd, vec, vlen, flags);
	int err = errno;
	uint64_t sent = 0;
	for (int i = 0; i < n; i++)
		sent += vec[i].msg_len;
	rlt__settle(&rlt_pre_rules, &t, sent, n > 0 ? (uint64_t)n : 0);
	errno = err;
	return n;
}

RLT_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_SEND)))
		return real_sendmmsg(fd, vec, vlen, flags);
	return sendmmsg_slow(fd, vec, vlen, flags);
}

struct file_ctx {
	int out, in;
	off_t *off;
};

static ssize_t sendfile_piece(void *c, int out, size_t off, size_t len)
{
	struct file_ctx *f = c;
	(void)off; /* the kernel advances the offset (or the file position) itself */
	return real_sendfile(out, f->in, f->off, len);
}

static RLT_SLOW ssize_t sendfile_slow(int out, int in, off_t *off, size_t count)
{
	struct rlt_pre_fd *e;
	struct file_ctx c = {out, in, off};

	rlt_pre_ensure_real();
	e = rlt_pre_socket_for(out, RLT_VAR_SEND);
	if (!e || !e->mask[RLT_VAR_SEND])
		return real_sendfile(out, in, off, count);
	if (rlt_pre_is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_SEND, e->mask[RLT_VAR_SEND],
		                          rlt_pre_budget_states(e), &e->peer, count, 1) != 0)
			return rlt_pre_fail(t.err);
		ssize_t n = real_sendfile(out, in, off, count);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0);
		errno = err;
		return n;
	}
	return rlt_pre_stream_io(out, e, RLT_VAR_SEND, e->mask[RLT_VAR_SEND], count, e->nonblock,
	                         0, 0, sendfile_piece, &c);
}

RLT_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	if (rlt_pre_passes(out, RLT_PASS(RLT_VAR_SEND)))
		return real_sendfile(out, in, off, count);
	return sendfile_slow(out, in, off, count);
}

/* off64_t and off_t are one type on the 64-bit ABIs we build for. */
struct splice_ctx {
	int in, out;
	loff_t *off_in, *off_out;
	unsigned flags;
	int sock_out; /* the socket is `out` (a send), else `in` */
};

static ssize_t splice_piece(void *c, int sock, size_t off, size_t len)
{
	struct splice_ctx *s = c;
	(void)off; /* the kernel moves the offsets (or the file positions) itself */
	return real_splice(s->sock_out ? s->in : sock, s->off_in, s->sock_out ? sock : s->out,
	                   s->off_out, len, s->flags);
}

/*
 * splice moves bytes between a pipe and a file or socket without a copy (Go's io.Copy between
 * two TCP connections, HAProxy, proxies). One end is a pipe, so at most one is a socket: a
 * stream socket is paced as a send or a receive of the same length (pieces, each when the
 * budget allows; splice may always return less than asked, and callers loop); a datagram
 * socket's send is charged whole.
 */
static RLT_SLOW ssize_t splice_slow(int in, loff_t *off_in, int out, loff_t *off_out,
                                    size_t len, unsigned flags)
{
	struct splice_ctx c = {in, out, off_in, off_out, flags, 1};
	struct rlt_pre_fd *e;
	enum rlt_var var = RLT_VAR_SEND;

	rlt_pre_ensure_real();
	e = rlt_pre_socket_for(out, RLT_VAR_SEND);
	if (!e || !e->mask[RLT_VAR_SEND]) {
		var = RLT_VAR_RECV;
		c.sock_out = 0;
		e = rlt_pre_socket_for(in, RLT_VAR_RECV);
		if (!e || !e->mask[RLT_VAR_RECV] || rlt_pre_is_dgram(e))
			return real_splice(in, off_in, out, off_out, len, flags);
	}
	if (rlt_pre_is_dgram(e)) {
		struct rlt__ticket t;
		if (rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_SEND, e->mask[RLT_VAR_SEND],
		                          rlt_pre_budget_states(e), &e->peer, len, 1) != 0)
			return rlt_pre_fail(t.err);
		ssize_t n = real_splice(in, off_in, out, off_out, len, flags);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0);
		errno = err;
		return n;
	}
	return rlt_pre_stream_io(var == RLT_VAR_SEND ? out : in, e, var, e->mask[var], len,
	                         e->nonblock, 0, 0, splice_piece, &c);
}

RLT_EXPORT ssize_t splice(int in, loff_t *off_in, int out, loff_t *off_out, size_t len,
                          unsigned flags)
{
	if (rlt_pre_passes(out, RLT_PASS(RLT_VAR_SEND)) && rlt_pre_passes(in, RLT_PASS(RLT_VAR_RECV)))
		return real_splice(in, off_in, out, off_out, len, flags);
	return splice_slow(in, off_in, out, off_out, len, flags);
}

RLT_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	_Static_assert(sizeof(off64_t) == sizeof(off_t), "sendfile64 is sendfile here");
	return sendfile(out, in, (off_t *)off, count);
}
