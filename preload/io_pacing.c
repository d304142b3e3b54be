/*
 * io_pacing.c: how the send and receive hooks (hook_send.c, hook_recv.c) move what they pace.
 * What is decided (whole or in pieces, charged before or after, the size of each piece, whether
 * the call goes on) is src/pacing.c's; this file holds the hooks'
 * mechanics: a loop that makes the real calls and sleeps in rlt__charge_wait* for the budget.
 * A blocking stream send no larger than what can go whole is charged whole, waited for, and
 * made as one real call; a larger one goes out piece by piece and returns when all of it has
 * gone; so do sendfile and splice, which may always return less. A non-blocking call never
 * sleeps: one the budget does not allow now fails with EAGAIN, nothing charged, when the waits
 * hold its socket back until it is allowed (hook_poll.c: the same decision, so an event loop
 * never spins on an EAGAIN of ours); one it allows in part moves that part. A socket whose
 * readiness the waits cannot hold (a one-shot epoll registration) keeps the old rule: it waits
 * for one piece at the least. Datagrams are never split: a send is charged whole before it is made, a
 * receive whole after it arrived (its size is not known before), delaying its return.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "charge.h"
#include "clock.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "io_pacing.h"
#include "iov.h"
#include "load.h"
#include "pacing.h"
#include "preload.h"
#include "real.h"

/* The rules for a datagram sent to an explicit address on an unconnected socket. */
uint32_t rlt_pre_mask_to(struct rlt_pre_fd *e, enum rlt_var var, const struct sockaddr *sa,
                         socklen_t len, struct rlt__peer *to)
{
	to->af = 0;
	if (!sa || e->peer.af)
		return e->mask[var];
	rlt__peer_from_sockaddr(to, sa, len);
	if (to->af == 0)
		return e->mask[var];
	return rlt__match(&rlt_pre_rules, var, to);
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
 * The socket a paced call started on, held. The fd number is not the socket: another thread
 * may dup2 another socket onto it (or close it and have the number given to a new one) while
 * the call sleeps for its budget, and the next piece would then go to that socket, its bytes
 * lost to the peer that was sent them and delivered to one that was not (issue 17 row 1). A
 * blocking call holds a reference to its open file for as long as it runs, which is what the
 * kernel gives one real call; a call we make as several real calls, or after a sleep, takes
 * that reference itself: a duplicate (F_DUPFD_CLOEXEC), made the first time the call is to
 * wait or to make a second real call, and closed when the call returns. A system call of our
 * own per paced call, then, never for a call that conforms and goes whole. The duplicate is
 * put high (PIN_BASE) so as not to take the lowest free number, which the program's next
 * socket or open is given and which some programs rely on. If none can be had (EMFILE), the
 * call goes on with the number, as before.
 */
struct pin {
	int fd;  /* the call's fd */
	int use; /* what its real calls are made on: fd, or the duplicate */
};

int rlt_pre_pin_base(void)
{
	static _Atomic int base;
	int b = atomic_load_explicit(&base, memory_order_relaxed);
	if (b == 0) {
		struct rlimit rl;
		rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
		/* above what shells and most programs use (bash: 10 and up, 255), within the
		 * limit, and low enough not to grow the kernel's fd table to a large limit */
		b = cur > 2048 ? 1024 : cur > 6 ? (int)(cur / 2) : 3;
		atomic_store_explicit(&base, b, memory_order_relaxed);
	}
	return b;
}

static void pin_hold(struct pin *p)
{
	if (p->use != p->fd)
		return;
	int saved = errno, d = real_fcntl(p->fd, F_DUPFD_CLOEXEC, rlt_pre_pin_base());
	if (d >= 0)
		p->use = d;
	errno = saved;
}

static void pin_drop(struct pin *p)
{
	if (p->use != p->fd) {
		int saved = errno;
		real_close(p->use);
		errno = saved;
	}
}

/*
 * A receive charged after it is made (src/pacing.c: RLT_PACE_AFTER): the piece is received
 * first, as the program asked (blocking, with its SO_RCVTIMEO and its signal semantics), then
 * charged and waited for, so that a receive waiting for data holds no reservation. What
 * arrives early waits in the program's buffer, at most one piece (10 ms of the rate) ahead of
 * the rate.
 */
static ssize_t recv_then_charge(struct pin *pn, const struct rlt__peer *peer, void *states,
                                struct rlt__pace *p, rlt_pre_piece_fn fn, void *ctx)
{
	int more;

	do {
		struct rlt__ticket t;
		size_t done = (size_t)p->done, piece = (size_t)rlt__pace_piece(p, NULL, NULL, 0);
		if (done)
			pin_hold(pn); /* a second real call: on the socket of the first */
		ssize_t n = fn(ctx, pn->use, done, piece);
		if (n <= 0)
			return done ? (ssize_t)done : n; /* the end of the stream, or its errno */
		int err = errno;
		/* the clock is read after the call: a reading from before it would date the charge
		 * back by as long as the call waited for data, and give that time away */
		/* MSG_WAITALL: data has moved, so a handler that runs ends the call with it */
		int intr = (p->flags & RLT_PACE_WAITALL)
		                   ? rlt__charge_wait_intr(&rlt_pre_rules, &t, RLT_VAR_RECV, p->mask,
		                                           states, peer, (uint64_t)n, done == 0,
		                                           rlt__now())
		                   : rlt__charge_wait_at(&rlt_pre_rules, &t, RLT_VAR_RECV, p->mask,
		                                         states, peer, (uint64_t)n, done == 0,
		                                         rlt__now());
		rlt__settle(&rlt_pre_rules, &t, (uint64_t)n, done == 0);
		errno = err;
		more = rlt__pace_after(p, piece, (uint64_t)n, intr > 0);
	} while (more);
	return (ssize_t)p->done;
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

/*
 * A send that goes whole (src/pacing.c: RLT_PACE_WHOLE), the common case: one clock read, one
 * charge, one real call. A call that moves all of it has nothing to settle (its charge counted
 * it); a short one or an error gives back what it did not use, as the loop below would. One
 * that waits holds its socket first (struct pin).
 */
static ssize_t send_whole(struct pin *pn, struct rlt_pre_fd *e, const struct rlt__peer *peer,
                          void *states, enum rlt_var var, uint32_t mask, size_t total,
                          int nonblock, rlt_pre_piece_fn fn, void *ctx)
{
	struct rlt__ticket t;

	if (rlt__charge_at(&rlt_pre_rules, &t, var, mask, states, peer, total, 1, rlt__now()) != 0)
		return rlt_pre_fail(t.err);
	if (t.go > t.start) {
		pin_hold(pn);
		rlt__ticket_wait(&rlt_pre_rules, &t, 0); /* no data moved yet: the wait goes on */
	}
	ssize_t n = fn(ctx, pn->use, 0, total);
	if (__builtin_expect(n == (ssize_t)total, 1)) {
		rlt__settle(&rlt_pre_rules, &t, total, 1);
		return n;
	}
	int err = errno;
	rlt__settle(&rlt_pre_rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0);
	/* short, or EAGAIN on a call made as blocking: see learn_nonblock */
	if (!nonblock && (n >= 0 || err == EAGAIN || err == EWOULDBLOCK))
		learn_nonblock(pn->use, e);
	errno = err;
	return n;
}

int rlt_pre_refused(struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask, void *states,
                   const struct rlt__peer *peer, unsigned flags, rlt_ns_t now)
{
	if (atomic_load_explicit(&e->unheld, memory_order_relaxed))
		flags |= RLT_PACE_UNHELD;
	if (!rlt__pace_refuses(&rlt_pre_rules, var, mask, states, peer, flags, now))
		return 0;
	rlt_pre_fd_refused(rlt_pre_fd_of(e), var);
	return 1;
}

/* A datagram goes whole or not at all. */
ssize_t rlt_pre_sent_rest(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                          ssize_t n)
{
	int err = errno;

	if (rlt_pre_is_dgram(e)) {
		rlt__settle(&rlt_pre_rules, t, n >= 0 ? t->bytes : 0, n >= 0);
	} else {
		rlt__settle(&rlt_pre_rules, t, n > 0 ? (uint64_t)n : 0, n >= 0);
		/* short, or EAGAIN on a call made as blocking: see learn_nonblock */
		if (!nonblock && (n >= 0 ? (uint64_t)n < t->bytes
		                         : (err == EAGAIN || err == EWOULDBLOCK)))
			learn_nonblock(fd, e);
	}
	errno = err;
	return n;
}

/* A stream's wait holds the socket, as the pacing loop's does; a datagram's, as send_buf's
 * (hook_send.c), does not. */
ssize_t rlt_pre_send_waited(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                            rlt_pre_piece_fn fn, void *ctx)
{
	struct pin pn = {fd, fd};

	if (!rlt_pre_is_dgram(e))
		pin_hold(&pn);
	rlt__ticket_wait(&rlt_pre_rules, t, 0); /* no data moved yet: the wait goes on */
	ssize_t n = rlt_pre_sent_rest(pn.use, e, t, nonblock, fn(ctx, pn.use, 0, t->bytes));
	pin_drop(&pn);
	return n;
}

/* The pieces of a call charged before they are made (src/pacing.c decides; this loop makes the
 * real calls, on the socket the call started on, and sleeps for the budget). */
static ssize_t pieces(struct pin *pn, struct rlt_pre_fd *e, const struct rlt__peer *peer,
                      void *states, struct rlt__pace *p, enum rlt_var var, uint32_t mask,
                      int nonblock, int keep_whole, rlt_pre_piece_fn fn, void *ctx)
{
	int more;

	do {
		struct rlt__ticket t;
		size_t done = (size_t)p->done;
		rlt_ns_t now = rlt__now();
		size_t piece = (size_t)rlt__pace_piece(p, &rlt_pre_rules, states, now);

		if (rlt__charge_at(&rlt_pre_rules, &t, var, mask, states, peer, piece, done == 0,
		                   now) != 0) {
			if (done)
				return (ssize_t)done;
			return rlt_pre_fail(t.err);
		}
		/* a call that waits, or makes a second real call, holds its socket (struct pin) */
		if (done || t.go > t.start)
			pin_hold(pn);
		/* Once data has moved, a handler that runs during the wait ends the call with the
		 * count moved, as the kernel's own blocking call would (SA_RESTART or not): a
		 * program checks its signals between calls (Python's sendall), and must not wait
		 * for the whole throttled transfer first. Before any data, the wait goes on. */
		if (rlt__ticket_wait(&rlt_pre_rules, &t, done != 0) > 0) {
			rlt__settle(&rlt_pre_rules, &t, 0, 0);
			return (ssize_t)done;
		}
		ssize_t n = fn(ctx, pn->use, done, piece);
		int err = errno;
		rlt__settle(&rlt_pre_rules, &t, n > 0 ? (uint64_t)n : 0, n >= 0 && done == 0);
		int short_send = keep_whole && var == RLT_VAR_SEND && n >= 0 && (size_t)n < piece;
		if (!nonblock && ((n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) || short_send))
			learn_nonblock(pn->use, e);
		if (n < 0) {
			if (done)
				return (ssize_t)done;
			errno = err;
			return -1;
		}
		more = rlt__pace_after(p, piece, (uint64_t)n, 0);
	} while (more);
	return (ssize_t)p->done;
}

ssize_t rlt_pre_stream_io(int fd, struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask,
                          size_t total, int nonblock, int waitall, int keep_whole,
                          rlt_pre_piece_fn fn, void *ctx)
{
	unsigned flags = (nonblock ? RLT_PACE_NONBLOCK : 0) | (waitall ? RLT_PACE_WAITALL : 0) |
	                 (keep_whole ? RLT_PACE_KEEP_WHOLE : 0) |
	                 (keep_whole == RLT_PRE_UNSPLIT ? RLT_PACE_UNSPLIT : 0);
	void *states = rlt_pre_budget_states(e);
	/* the peer the call started with: the entry is the fd number's, which may change */
	struct rlt__peer peer = e->peer;
	struct pin pn = {fd, fd};
	struct rlt__pace p;
	ssize_t n;

	if (total == 0)
		return fn(ctx, fd, 0, 0);
	if (nonblock && rlt_pre_refused(e, var, mask, states, &peer, flags, rlt__now()))
		return rlt_pre_fail(EAGAIN);
	if (rlt__pace_whole(&rlt_pre_rules, var, mask, total, flags)) {
		n = send_whole(&pn, e, &peer, states, var, mask, total, nonblock, fn, ctx);
		pin_drop(&pn);
		return n;
	}
	rlt__pace_begin(&p, &rlt_pre_rules, var, mask, total, flags);
	p.peer = &peer; /* a stream's remote end: what a keyed rule's key is made of */
	if (rlt__pace_charge_after(&p))
		n = recv_then_charge(&pn, &peer, states, &p, fn, ctx);
	else
		n = pieces(&pn, e, &peer, states, &p, var, mask, nonblock, keep_whole, fn, ctx);
	pin_drop(&pn);
	return n;
}

/* ----- datagrams ----- */

/* The rules of a socket with a peer, or of a connected one, are known before a receive: those
 * of an unconnected socket come with each datagram's sender, and the waits do not hold it. */
int rlt_pre_dgram_refused(struct rlt_pre_fd *e, int nonblock)
{
	uint32_t mask = e->mask[RLT_VAR_RECV];

	if (!nonblock || !mask ||
	    !rlt_pre_refused(e, RLT_VAR_RECV, mask, rlt_pre_budget_states(e), &e->peer,
	                     RLT_PACE_NONBLOCK, rlt__now()))
		return 0;
	errno = EAGAIN;
	return 1;
}

/* After a datagram arrived: charge it whole and hold it until its slot. A reject rule that
 * does not admit it fails the call and the datagram is dropped, as a policer drops a packet.
 * A non-blocking receive, let through by rlt_pre_dgram_refused, does not sleep: its charge
 * stands (the budget owes what the datagram took beyond it) and the next receive is refused,
 * and the socket held by the waits, until it is paid. */
ssize_t rlt_pre_dgram_received(struct rlt_pre_fd *e, uint32_t mask, const struct rlt__peer *peer,
                               ssize_t n, uint64_t bytes, uint64_t msgs, int nonblock)
{
	struct rlt__ticket t;
	int rc;

	if (n < 0 || !mask)
		return n;
	int saved = errno;
	if (nonblock && !atomic_load_explicit(&e->unheld, memory_order_relaxed))
		rc = rlt__charge_at(&rlt_pre_rules, &t, RLT_VAR_RECV, mask, rlt_pre_budget_states(e),
		                    peer, bytes, msgs, rlt__now());
	else
		rc = rlt__charge_wait_peer(&rlt_pre_rules, &t, RLT_VAR_RECV, mask,
		                           rlt_pre_budget_states(e), peer, bytes, msgs);
	if (rc != 0)
		return rlt_pre_fail(t.err);
	rlt__settle(&rlt_pre_rules, &t, bytes, msgs);
	errno = saved;
	return n;
}
