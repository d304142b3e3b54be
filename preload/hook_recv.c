/*
 * hook_recv.c: receiving (RLT_RECV). Every entry point the C library has for receiving on a
 * socket (recv, recvfrom, read, recvmsg, readv, recvmmsg and the _FORTIFY_SOURCE _chk ones).
 * How a receive is paced: io_pacing.c. Each hook asks the gate first (rlt_pre_passes, fdtable.h)
 * and jumps to the real function when the call is surely not ours; its *_slow part decides.
 */
#include <limits.h>
#include <string.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "clock.h"
#include "fdtable.h"
#include "io_pacing.h"
#include "iov.h"
#include "load.h"
#include "preload.h"
#include "real.h"

extern void __chk_fail(void) __attribute__((noreturn));
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                       struct sockaddr *from, socklen_t *fromlen);


struct rbuf_ctx {
	int fd;
	char *buf;
	int flags;
	struct sockaddr *from;
	socklen_t *fromlen;
	int use_read;
};

static ssize_t buf_recv_piece(void *c, int fd, size_t off, size_t len)
{
	struct rbuf_ctx *b = c;
	if (b->use_read)
		return real_read(fd, b->buf + off, len);
	/* the sender's address belongs to the first piece */
	return real_recvfrom(fd, b->buf + off, len, b->flags, off ? NULL : b->from,
	                     off ? NULL : b->fromlen);
}

/* The out-of-line part of recv, recvfrom and read: the gate (rlt_pre_passes) did not let the
 * call straight through, so it may be ours. */
static ssize_t recv_buf(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                        socklen_t *fromlen, int use_read)
{
	rlt_pre_ensure_real();
	struct rlt_pre_fd *e = rlt_pre_socket_for(fd, RLT_VAR_RECV);
	struct rbuf_ctx c = {fd, buf, flags, from, fromlen, use_read};

	if (!e || (flags & MSG_PEEK))
		goto straight;
	int nonblock = e->nonblock || (flags & MSG_DONTWAIT);
	if (rlt_pre_is_dgram(e)) {
		if (rlt_pre_dgram_refused(e, nonblock))
			return -1; /* EAGAIN: see io_pacing.c */
		/* learn the sender, to apply the rules that filter on it */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		int need_addr = !e->peer.af && rlt_pre_rules.n[RLT_VAR_RECV];
		struct rlt__peer src;
		ssize_t n;
		if (!need_addr) {
			if (!e->mask[RLT_VAR_RECV])
				goto straight;
			n = use_read ? real_read(fd, buf, len)
			             : real_recvfrom(fd, buf, len, flags, from, fromlen);
			return rlt_pre_dgram_received(e, e->mask[RLT_VAR_RECV], &e->peer, n,
			                              n > 0 ? (uint64_t)n : 0, 1, nonblock);
		}
		n = real_recvfrom(fd, buf, len, flags, (struct sockaddr *)&ss, &sl);
		if (n >= 0 && from && fromlen) {
			memcpy(from, &ss, *fromlen < sl ? *fromlen : sl);
			*fromlen = sl;
		}
		uint32_t mask = n >= 0 ? rlt_pre_mask_to(e, RLT_VAR_RECV, (struct sockaddr *)&ss, sl, &src)
		                       : 0;
		return rlt_pre_dgram_received(e, mask, rlt_pre_key_peer(e, &src), n,
		                              n > 0 ? (uint64_t)n : 0, 1, nonblock);
	}
	if (!e->mask[RLT_VAR_RECV])
		goto straight;
	return rlt_pre_stream_io(fd, e, RLT_VAR_RECV, e->mask[RLT_VAR_RECV], len,
	                         e->nonblock || (flags & MSG_DONTWAIT), (flags & MSG_WAITALL) != 0, 0,
	                         buf_recv_piece, &c);
straight:
	return use_read ? real_read(fd, buf, len) : real_recvfrom(fd, buf, len, flags, from, fromlen);
}

/* Six arguments at most, so that a hook reaches them by a jump, without a frame of its own. */
static RLT_SLOW ssize_t recvfrom_slow(int fd, void *buf, size_t len, int flags,
                                      struct sockaddr *from, socklen_t *fromlen)
{
	return recv_buf(fd, buf, len, flags, from, fromlen, 0);
}

static RLT_SLOW ssize_t read_slow(int fd, void *buf, size_t len)
{
	return recv_buf(fd, buf, len, 0, NULL, NULL, 1);
}

RLT_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recv(fd, buf, len, flags);
	return recvfrom_slow(fd, buf, len, flags, NULL, NULL);
}

RLT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
                            socklen_t *fromlen)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recvfrom(fd, buf, len, flags, from, fromlen);
	return recvfrom_slow(fd, buf, len, flags, from, fromlen);
}

RLT_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_read(fd, buf, len);
	return read_slow(fd, buf, len);
}

static ssize_t msg_recv_piece(void *c, int fd, size_t off, size_t len)
{
	struct rlt_pre_msg_ctx *m = c;
	struct iovec iov[RLT_IOV_PIECE_MAX];
	struct msghdr *h = (struct msghdr *)m->msg;
	int cnt = rlt_pre_iov_slice(h->msg_iov, (int)h->msg_iovlen, off, len, iov);

	if (m->use_writev)
		return real_readv(fd, iov, cnt);
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
	ssize_t n = real_recvmsg(fd, &piece, m->flags);
	if (off == 0) {
		h->msg_namelen = piece.msg_namelen;
		h->msg_controllen = piece.msg_controllen;
		h->msg_flags = piece.msg_flags;
	}
	return n;
}

static RLT_SLOW ssize_t recv_msg(int fd, struct msghdr *msg, int flags, int use_readv)
{
	rlt_pre_ensure_real();
	struct rlt_pre_fd *e = rlt_pre_socket_for(fd, RLT_VAR_RECV);
	struct rlt_pre_msg_ctx c = {fd, msg, flags, use_readv};

	if (!e || !msg || (flags & MSG_PEEK) || msg->msg_iovlen > RLT_IOV_PIECE_MAX)
		goto straight;
	int nonblock = e->nonblock || (flags & MSG_DONTWAIT);
	if (rlt_pre_is_dgram(e)) {
		struct rlt__peer src = {.af = 0};
		struct sockaddr_storage ss;
		if (rlt_pre_dgram_refused(e, nonblock))
			return -1; /* EAGAIN: see io_pacing.c */
		ssize_t n;
		uint32_t mask = e->mask[RLT_VAR_RECV];
		if (!e->peer.af && rlt_pre_rules.n[RLT_VAR_RECV] && (use_readv || !msg->msg_name)) {
			/* learn the sender, as recv_buf does, for the rules that filter or key on it
			 * (on a socket, readv is recvmsg without an address) */
			struct msghdr h = *msg;
			h.msg_name = &ss;
			h.msg_namelen = sizeof ss;
			n = real_recvmsg(fd, &h, use_readv ? 0 : flags);
			msg->msg_controllen = h.msg_controllen;
			msg->msg_flags = h.msg_flags;
			if (n >= 0)
				mask = rlt_pre_mask_to(e, RLT_VAR_RECV, (struct sockaddr *)&ss, h.msg_namelen,
				                       &src);
		} else {
			n = use_readv ? real_readv(fd, msg->msg_iov, (int)msg->msg_iovlen)
			              : real_recvmsg(fd, msg, flags);
			if (!use_readv && msg->msg_name && n >= 0)
				mask = rlt_pre_mask_to(e, RLT_VAR_RECV, msg->msg_name, msg->msg_namelen,
				                       &src);
		}
		return rlt_pre_dgram_received(e, mask, rlt_pre_key_peer(e, &src), n,
		                              n > 0 ? (uint64_t)n : 0, 1, nonblock);
	}
	if (!e->mask[RLT_VAR_RECV])
		goto straight;
	return rlt_pre_stream_io(fd, e, RLT_VAR_RECV, e->mask[RLT_VAR_RECV],
	                         rlt_pre_iov_total(msg->msg_iov, (int)msg->msg_iovlen),
	                         e->nonblock || (flags & MSG_DONTWAIT), (flags & MSG_WAITALL) != 0, 0,
	                         msg_recv_piece, &c);
straight:
	return use_readv ? real_readv(fd, msg->msg_iov, (int)msg->msg_iovlen)
	                 : real_recvmsg(fd, msg, flags);
}

RLT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recvmsg(fd, msg, flags);
	return recv_msg(fd, msg, flags, 0);
}

static RLT_SLOW ssize_t readv_slow(int fd, const struct iovec *iov, int cnt)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt_pre_ensure_real();
	if (cnt < 0 || !rlt_pre_socket_for(fd, RLT_VAR_RECV))
		return real_readv(fd, iov, cnt);
	return recv_msg(fd, &h, 0, 1);
}

RLT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_readv(fd, iov, cnt);
	return readv_slow(fd, iov, cnt);
}

/* preadv2 on a socket: a readv when its offset is -1, a non-blocking one with RWF_NOWAIT
 * (see pwritev2 in hook_send.c). */
static RLT_SLOW ssize_t preadv2_slow(int fd, const struct iovec *iov, int cnt, off_t off,
                                     int flags)
{
	struct msghdr h = {.msg_iov = (struct iovec *)iov, .msg_iovlen = cnt < 0 ? 0 : (size_t)cnt};
	rlt_pre_ensure_real();
	if (cnt < 0 || off != -1 || (flags & ~RWF_NOWAIT) || !rlt_pre_socket_for(fd, RLT_VAR_RECV))
		return real_preadv2(fd, iov, cnt, off, flags);
	return flags ? recv_msg(fd, &h, MSG_DONTWAIT, 0) : recv_msg(fd, &h, 0, 1);
}

RLT_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_preadv2(fd, iov, cnt, off, flags);
	return preadv2_slow(fd, iov, cnt, off, flags);
}

RLT_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return preadv2(fd, iov, cnt, off, flags);
}

static RLT_SLOW int recvmmsg_slow(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                                  struct timespec *timeout)
{
	struct rlt_pre_fd *e;

	rlt_pre_ensure_real();
	e = rlt_pre_socket_for(fd, RLT_VAR_RECV);
	int nonblock = e && (e->nonblock || (flags & MSG_DONTWAIT));
	if (e && !(flags & MSG_PEEK) && rlt_pre_dgram_refused(e, nonblock))
		return -1; /* EAGAIN: see io_pacing.c */
	int n = real_recvmmsg(fd, vec, vlen, flags, timeout);
	if (!e || n <= 0 || (flags & MSG_PEEK) || !e->mask[RLT_VAR_RECV])
		return n;
	uint64_t bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += vec[i].msg_len;
	/* a keyed rule charges them all to the first one's sender, when the program asked for it */
	struct rlt__peer src = {.af = 0};
	if (!e->peer.af && vec[0].msg_hdr.msg_name)
		rlt__peer_from_sockaddr(&src, vec[0].msg_hdr.msg_name, vec[0].msg_hdr.msg_namelen);
	return (int)rlt_pre_dgram_received(e, e->mask[RLT_VAR_RECV], rlt_pre_key_peer(e, &src), n,
	                                   bytes, (uint64_t)n, nonblock);
}

RLT_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
                        struct timespec *timeout)
{
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recvmmsg(fd, vec, vlen, flags, timeout);
	return recvmmsg_slow(fd, vec, vlen, flags, timeout);
}

/* glibc's _FORTIFY_SOURCE entry points: the same calls with a buffer-size check first. */
RLT_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__chk_fail();
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_read(fd, buf, len);
	return read_slow(fd, buf, len);
}

RLT_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__chk_fail();
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recv(fd, buf, len, flags);
	return recvfrom_slow(fd, buf, len, flags, NULL, NULL);
}

RLT_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                                  struct sockaddr *from, socklen_t *fromlen)
{
	if (len > buflen)
		__chk_fail();
	if (rlt_pre_passes(fd, RLT_PASS(RLT_VAR_RECV)))
		return real_recvfrom(fd, buf, len, flags, from, fromlen);
	return recvfrom_slow(fd, buf, len, flags, from, fromlen);
}
