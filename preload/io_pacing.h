/*
 * io_pacing.h: what the send and receive hooks (hook_send.c, hook_recv.c) share with the
 * pacing loop that moves what they pace (io_pacing.c): a socket a rule may apply to, the
 * pieces of a message, a paced stream call, the short way of a send, a datagram's charge.
 */
#ifndef RLT_IO_PACING_H
#define RLT_IO_PACING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "charge.h"
#include "charge_quick.h"
#include "clock.h"
#include "fdtable.h"
#include "load.h"
#include "pacing.h"
#include "policy.h"
#include "preload.h"
#include "redis_client.h" /* rlt__internal */

/* The fd's entry when a rule of var may apply to it; NULL sends the call straight through
 * (a file, a pipe, a socket no rule matches, or no rule at all for var: one load each).
 * Inline: it is the whole cost of a call that is not ours. Not NULL only once the rules are
 * loaded (rlt_pre_active), and so the real symbols resolved (init.c resolves them first). */
static inline struct rlt_pre_fd *rlt_pre_socket_for(int fd, enum rlt_var var)
{
	struct rlt_pre_fd *e;
	unsigned n;

	if (!(rlt_pre_vars_in_use & (1u << var)) ||
	    !atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal)
		return NULL;
	/* the gate's copy of the table, on the line the gate has just read */
	n = atomic_load_explicit(&rlt_pre_gate.size, memory_order_acquire);
	e = (unsigned)fd < n ? &rlt_pre_gate.table[fd] : NULL;
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_UNKNOWN)
		e = rlt_pre_fd_get(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET)
		return NULL;
	return e;
}

static inline int rlt_pre_is_dgram(const struct rlt_pre_fd *e)
{
	return e->type != SOCK_STREAM;
}

/* The rules for a datagram sent to (or received from) an explicit address on an unconnected
 * socket. *to: that address as a peer (af 0: none, or the socket is connected), for
 * rlt_pre_key_peer. */
uint32_t rlt_pre_mask_to(struct rlt_pre_fd *e, enum rlt_var var, const struct sockaddr *sa,
                         socklen_t len, struct rlt__peer *to);

/* What a keyed rule keys a send or receive on (rlthrottle(7) RULES `key`): the socket's peer when it is
 * connected, else the datagram's address (`to`, from rlt_pre_mask_to; af 0: "(no address)"). */
static inline const struct rlt__peer *rlt_pre_key_peer(const struct rlt_pre_fd *e,
                                                       const struct rlt__peer *to)
{
	return e->peer.af ? &e->peer : to;
}

#define RLT_IOV_PIECE_MAX 1024 /* IOV_MAX on Linux */

/* The part [off, off + len) of iov, in at most RLT_IOV_PIECE_MAX entries; the entries used. */
int rlt_pre_iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
                      struct iovec out[RLT_IOV_PIECE_MAX]);
/* The bytes of iov (SSIZE_MAX at most). */
size_t rlt_pre_iov_total(const struct iovec *iov, int cnt);

/* Where a call's duplicate of its socket goes (F_DUPFD_CLOEXEC's lowest number): above what
 * programs use, so that the lowest free number stays the program's. */
int rlt_pre_pin_base(void);

/* One real call moving bytes [off, off + len) of the message on the socket `fd` (the call's
 * own, or the duplicate a paced call holds: rlt_pre_stream_io). */
typedef ssize_t (*rlt_pre_piece_fn)(void *ctx, int fd, size_t off, size_t len);

/* The context of a piece of sendmsg/writev or recvmsg/readv (hook_send.c, hook_recv.c). */
struct rlt_pre_msg_ctx {
	int fd;
	const struct msghdr *msg;
	int flags;
	int use_writev; /* writev/readv rather than sendmsg/recvmsg */
};

/* A stream send or receive of total bytes, piece by piece, each when the budget allows.
 * keep_whole: a send made by send, sendto, write, sendmsg or writev, which goes out in one
 * real call when it is small enough (rlt__whole); sendfile and splice move in pieces.
 * RLT_PRE_UNSPLIT: one real call whatever its size (a send whose flags the kernel reads per
 * call, MSG_ZEROCOPY: RLT_PACE_UNSPLIT). */
#define RLT_PRE_UNSPLIT 2
/* The send flags under which a call is made whole (RLT_PRE_UNSPLIT). */
#define RLT_PRE_UNSPLIT_FLAGS MSG_ZEROCOPY
ssize_t rlt_pre_stream_io(int fd, struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask,
                          size_t total, int nonblock, int waitall, int keep_whole,
                          rlt_pre_piece_fn fn, void *ctx);

/*
 * The short way of send, sendto and write (hook_send.c), for a send made as one real call
 * charged whole before it: a stream send that goes whole (rlt__pace_whole), or a datagram on a
 * connected socket (or sent with no address). rlt_pre_send_charge charges it, without a wait:
 * RLT_PRE_SENT_DONE (it goes at once: make the real call; if it moves all of len, there is
 * nothing left to do: its charge counted it), RLT_PRE_SETTLE (make it, then rlt_pre_sent_rest),
 * RLT_PRE_SEND_WAIT (it must wait: rlt_pre_send_waited makes it), 0 (not such a send: take the
 * long way), -1 (rejected: errno set). The hook makes the real call of a conforming send itself,
 * so that after the system call, which leaves the return predictions of a deep call chain
 * behind it, only the C library's return and the hook's own are left to make; and it keeps
 * what it needs then in registers, not in the ticket, whose lines the kernel's work evicts.
 */
#define RLT_PRE_SETTLE 1
#define RLT_PRE_SENT_DONE 2
#define RLT_PRE_SEND_WAIT 3
/* A non-blocking call the budget does not allow now fails with EAGAIN, nothing charged
 * (src/pacing.c rlt__pace_refuses), unless the socket's readiness is one the waits cannot
 * hold (struct rlt_pre_fd unheld): then it waits for one piece, as the program that gets EAGAIN
 * there would never be woken. 1 when it is refused so. */
int rlt_pre_refused(struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask, void *states,
                    const struct rlt__peer *peer, unsigned flags, rlt_ns_t now);
/* Inline in each hook: a call more on a conforming send's way costs as much as its decision. */
static inline __attribute__((always_inline)) int rlt_pre_send_charge(
	struct rlt_pre_fd *e, size_t len, int nonblock, struct rlt__ticket *t)
{
	static const struct rlt__peer no_address; /* af 0: the key "(no address)" */
	uint32_t mask = e->mask[RLT_VAR_SEND];
	const struct rlt__peer *peer = &e->peer;
	rlt_ns_t now;

	if (__builtin_expect(!mask || len == 0, 0))
		return 0;
	/* the rules' lines on their way before the clock read, which waits for loads before it;
	 * a send too large to go whole (a slow way anyway) then reads the clock again */
	rlt__charge_prefetch(&rlt_pre_rules, RLT_VAR_SEND, mask);
	now = rlt__now();
	if (rlt_pre_is_dgram(e)) {
		if (!e->peer.af)
			peer = &no_address;
	} else if (!rlt__pace_whole(&rlt_pre_rules, RLT_VAR_SEND, mask, len,
	                            RLT_PACE_KEEP_WHOLE | (nonblock ? RLT_PACE_NONBLOCK : 0))) {
		return 0;
	}
	if (nonblock && rlt_pre_refused(e, RLT_VAR_SEND, mask, rlt_pre_budget_states(e), peer,
	                                RLT_PACE_NONBLOCK, now))
		return rlt_pre_fail(EAGAIN);
	if (rlt__charge_at_hot(&rlt_pre_rules, t, RLT_VAR_SEND, mask, rlt_pre_budget_states(e),
	                       peer, len, 1, now) != 0)
		return rlt_pre_fail(t->err);
	if (__builtin_expect(t->go > t->start, 0))
		return RLT_PRE_SEND_WAIT;
	return __builtin_expect(t->counted, 1) ? RLT_PRE_SENT_DONE : RLT_PRE_SETTLE;
}
/* What the real call left to settle: a short send or an error gives back what it did not
 * move, as the pacing loop does. Keeps errno; returns n. */
ssize_t rlt_pre_sent_rest(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                          ssize_t n);
/* A send charged by rlt_pre_send_charge that must wait (RLT_PRE_SEND_WAIT): waits for its slot
 * holding a duplicate of a stream socket (as rlt_pre_stream_io's wait, issue 17), then makes it
 * (fn, as rlt_pre_stream_io's) and settles it. */
ssize_t rlt_pre_send_waited(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                            rlt_pre_piece_fn fn, void *ctx);
/* Before a non-blocking datagram receive (`nonblock`): 1 with errno EAGAIN when its budget
 * does not allow one now (the waits hold the socket until it does), nothing received. */
int rlt_pre_dgram_refused(struct rlt_pre_fd *e, int nonblock);
/* After a datagram arrived (n, or -1) from `peer` (rlt_pre_key_peer): charge it whole and
 * hold it until its slot; a non-blocking one is charged and not held (the waits hold the
 * socket until the budget has paid for it). */
ssize_t rlt_pre_dgram_received(struct rlt_pre_fd *e, uint32_t mask, const struct rlt__peer *peer,
                               ssize_t n, uint64_t bytes, uint64_t msgs, int nonblock);

#endif
