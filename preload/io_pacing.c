/*
 * io_pacing.c: how the send and receive hooks (hook_send.c, hook_recv.c) pace what they move.
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

/* The rules for a datagram sent to an explicit address on an unconnected socket. */
uint32_t rlt_pre_mask_to(struct rlt_pre_fd *e, enum rlt_var var, const struct sockaddr *sa,
                         socklen_t len)
{
	struct rlt__peer p;

	if (!sa || e->peer.af)
		return e->mask[var];
	rlt__peer_from_sockaddr(&p, sa, len);
	if (p.af == 0)
		return e->mask[var];
	return rlt__match(&rlt_pre_rules, var, &p);
}

/* ----- pieces of a message described by an iovec array ----- */


/* The part [off, off + len) of iov, in at most RLT_IOV_PIECE_MAX entries. */
int rlt_pre_iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
                      struct iovec out[RLT_IOV_PIECE_MAX])
{
	size_t missing;
	return (int)rlt__iov_slice(iov, cnt < 0 ? 0 : (size_t)cnt, off, len, out, RLT_IOV_PIECE_MAX,
	                           &missing);
}

size_t rlt_pre_iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	for (int i = 0; i < cnt; i++) {
		if (iov[i].iov_len > SSIZE_MAX - t)
			return SSIZE_MAX;
		t += iov[i].iov_len;
	}
	return t;
}


/* ----- streams ----- */

/*
 * A blocking stream receive under rules that admit every charge (rlt__always_admits): the
 * piece is received first, as the program asked (blocking, with its SO_RCVTIMEO and its
 * signal semantics), then charged and waited for. A receive that waits for data then holds
 * no reservation: a hundred threads blocked on idle connections would otherwise hold a
 * hundred pieces of the budget and hold up the busy ones. What arrives early waits in the
 * program's buffer, at most one piece (10 ms of the rate) ahead of the rate.
 */
static ssize_t recv_then_charge(struct rlt_pre_fd *e, uint32_t mask, size_t total, int waitall,
                                rlt_pre_piece_fn fn, void *ctx)
{
	uint64_t piece_max = rlt__piece(&rlt_pre_rules, RLT_VAR_RECV, mask);
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
		int intr = waitall ? rlt__charge_wait_intr(&rlt_pre_rules, &t, RLT_VAR_RECV, mask,
		                                           rlt_pre_budget_states(e), (uint64_t)n,
		                                           done == 0, rlt__now())
		                   : rlt__charge_wait_at(&rlt_pre_rules, &t, RLT_VAR_RECV, mask,
		                                         rlt_pre_budget_states(e), (uint64_t)n,
		                                         done == 0, rlt__now());
		rlt__settle(&rlt_pre_rules, &t, (uint64_t)n, done == 0);
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
static void learn_nonblock(int fd, struct rlt_pre_fd *e)
{
	int saved = errno, fl = real_fcntl(fd, F_GETFL);

	if (fl >= 0 && (fl & O_NONBLOCK))
		rlt_pre_fd_set_nonblock(e, 1);
	errno = saved;
}

/* keep_whole: a send made by send, sendto, write, sendmsg or writev, which goes out in one
 * real call when it is small enough (rlt__whole); sendfile and splice move in pieces. */
ssize_t rlt_pre_stream_io(int fd, struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask,
                          size_t total, int nonblock, int waitall, int keep_whole,
                          rlt_pre_piece_fn fn, void *ctx)
{
	void *states = rlt_pre_budget_states(e);
	uint64_t piece_max = rlt__piece(&rlt_pre_rules, var, mask);
	int rejects = rlt__rejects(&rlt_pre_rules, var, mask);
	size_t done = 0;

	if (total == 0)
		return fn(ctx, 0, 0);
	if (keep_whole && total <= rlt__whole(&rlt_pre_rules, var, mask, nonblock))
		piece_max = total;
	if (var == RLT_VAR_RECV && !nonblock && rlt__always_admits(&rlt_pre_rules, var, mask))
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
			uint64_t a = rlt__available(&rlt_pre_rules, var, mask, states, now);
			if (a < piece && (a >= piece / 2 || (a && rejects)))
				piece = (size_t)a;
		} else if (nonblock) {
			/* what the budget allows now, if that is at least one piece */
			uint64_t a = rlt__available(&rlt_pre_rules, var, mask, states, now);
			if (a > piece)
				piece = a < want ? (size_t)a : want;
		}
		/* Once data has moved, a handler that runs during the wait ends the call with the
		 * count moved, as the kernel's own blocking call would (SA_RESTART or not): a
		 * program checks its signals between calls (Python's sendall), and must not wait
		 * for the whole throttled transfer first. Before any data, the wait goes on. */
		int w = done ? rlt__charge_wait_intr(&rlt_pre_rules, &t, var, mask, states, piece, 0,
		                                     now)
		             : rlt__charge_wait_at(&rlt_pre_rules, &t, var, mask, states, piece, 1,
		                                   now);
		if (w < 0) {
			if (done)
				return (ssize_t)done;
			return rlt_pre_fail(t.err);
		}
		if (w > 0) {
			rlt__settle(&rlt_pre_rules, &t, 0, 0);
			return (ssize_t)done;
		}
		ssize_t n = fn(ctx, done, piece);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0 && done == 0);
		int short_send = keep_whole && var == RLT_VAR_SEND && n >= 0 && (size_t)n < piece;
		if (!nonblock && ((n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) || short_send))
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
ssize_t rlt_pre_dgram_received(struct rlt_pre_fd *e, uint32_t mask, ssize_t n, uint64_t bytes,
                               uint64_t msgs)
{
	struct rlt__ticket t;

	if (n < 0 || !mask)
		return n;
	int saved = errno;
	if (rlt__charge_wait(&rlt_pre_rules, &t, RLT_VAR_RECV, mask, rlt_pre_budget_states(e), bytes,
	                     msgs) != 0)
		return rlt_pre_fail(t.err);
	rlt__settle(&rlt_pre_rules, &t, bytes, msgs);
	errno = saved;
	return n;
}
