/*
 * pacing.h: how a stream send or receive is paced. The hooks (preload/io_pacing.c, under the
 * preload and in the --seccomp handler alike) make the call in a loop that sleeps; they keep
 * only its mechanics (how a piece is made, how a wait is waited) and ask this module three
 * things, in this order:
 *
 *   rlt__pace_begin   once per call: whole (one real call, charged before), in pieces (each
 *                     charged before it is made), or received first and charged after;
 *   rlt__pace_piece   before each real call: how many bytes it may move;
 *   rlt__pace_after   after each real call that moved n >= 0 bytes: whether the call goes on.
 *
 * Pure: no clock (the caller passes `now`), no sleep, no system call, no allocation; the
 * state is a small struct on the caller's stack.
 */
#ifndef RLT_PACING_H
#define RLT_PACING_H

#include <stdint.h>

#include "clock.h"
#include "policy.h"

/* The piece and the whole (rlt__piece, rlt__whole) of one bytes rule; UINT64_MAX for others. */
uint64_t rlt__piece_of(enum rlt_unit unit, const struct rlt_params *p);
uint64_t rlt__whole_of(enum rlt_unit unit, const struct rlt_params *p, uint64_t piece);
/* The largest piece (bytes) a call under `mask` of var should move in one real call. */
uint64_t rlt__piece(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask);

/*
 * The largest stream send (bytes) under `mask` of var that goes out as one real call, charged
 * whole; a larger one moves in pieces (rlt__piece). Threads sharing a socket rely on a send
 * the kernel would take whole being whole: a piece of it between another thread's pieces
 * tears both records. Blocking: the smallest over the byte rules of what can conform at once
 * (the burst: a token bucket's depth, a leaky bucket's capacity, a window's limit), and, for a
 * delay rule with a max-wait, of what the rate gives within it (so that a send is delayed,
 * never refused, for being whole); never less than a piece. Non-blocking: one piece (it sends
 * what the budget allows, as the kernel may send part of it).
 */
uint64_t rlt__whole(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask, int nonblock);

/* Whether every rule of var in mask admits any charge, at worst later: token buckets that delay
 * with no max-wait (a leaky bucket overflows, a window's wait is bounded by max-wait, a redis
 * rule may fall back to deny). Such a charge may be made after the call it pays for. */
int rlt__always_admits(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask);
/* Whether any rule of var in mask rejects rather than delays. */
int rlt__rejects(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask);

/* How a call is made (see rlt__pace_begin). */
enum rlt__pace_mode {
	RLT_PACE_WHOLE,  /* one real call for all of it, charged whole before it is made */
	RLT_PACE_PIECES, /* piece by piece, each charged (and waited for) before it is made */
	RLT_PACE_AFTER,  /* receive first, as the program asked, then charge what came */
};

/* What the caller says of the call (rlt__pace_begin's flags). */
enum rlt__pace_flag {
	RLT_PACE_NONBLOCK = 1u << 0,   /* O_NONBLOCK or MSG_DONTWAIT: never waits for its socket */
	RLT_PACE_WAITALL = 1u << 1,    /* a receive with MSG_WAITALL: goes on until all is there */
	RLT_PACE_KEEP_WHOLE = 1u << 2, /* a send by send, sendto, write, sendmsg or writev: goes
	                                * out in one real call when small enough (rlt__whole);
	                                * sendfile and splice move in pieces */
	RLT_PACE_UNSPLIT = 1u << 3, /* a call the throttle must not reshape, whatever its size:
	                             * its flags are the kernel's to interpret per real call (a
	                             * send with MSG_ZEROCOPY: each call is one completion id the
	                             * program counts). One real call, charged whole, as a
	                             * datagram is */
	RLT_PACE_UNHELD = 1u << 4,  /* a non-blocking call on a socket whose readiness the waits
	                             * cannot hold (a one-shot epoll registration, one beyond the
	                             * table): it waits for one piece at the least rather than
	                             * fail with EAGAIN, as the program would never be woken */
};

/* The state of one paced call. */
struct rlt__pace {
	enum rlt_var var;         /* RLT_VAR_SEND or RLT_VAR_RECV */
	uint32_t mask;            /* the rules that apply */
	unsigned flags;           /* enum rlt__pace_flag */
	enum rlt__pace_mode mode;
	int rejects;              /* a receive: a reject rule applies (it takes what there is) */
	uint64_t total;           /* bytes the program asked for */
	uint64_t done;            /* bytes moved so far */
	uint64_t piece_max;       /* the most one real call moves (rlt__piece, or all when whole) */
	/* Whose budget a keyed rule cuts a piece by (rlt__available_peer): the socket's peer,
	 * set by the front after rlt__pace_begin (which sets NULL: "(no address)"). */
	const struct rlt__peer *peer;
};

/*
 * Whether a stream call of `total` bytes under `mask` of var goes whole (RLT_PACE_WHOLE, as
 * rlt__pace_begin decides it): an RLT_PACE_UNSPLIT call, or a send with RLT_PACE_KEEP_WHOLE
 * no larger than rlt__whole. Inline, so that a front can take a whole send's short way without
 * a struct rlt__pace.
 */
/* rlt__whole of a blocking call: the least of the mask's rules' `whole`. Inline: a conforming
 * send asks it every time. */
static inline uint64_t rlt__whole_blocking(const struct rlt__ruleset *rs, enum rlt_var var,
                                           uint32_t mask)
{
	uint64_t whole = UINT64_MAX;

	for (uint32_t m = mask & ((1u << rs->n[var]) - 1); m; m &= m - 1) {
		uint64_t w = rlt__ver(&rs->rules[var][__builtin_ctz(m)])->whole;
		if (w < whole)
			whole = w;
	}
	return whole;
}

static inline int rlt__pace_whole(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                                  uint64_t total, unsigned flags)
{
	if (flags & RLT_PACE_UNSPLIT)
		return 1;
	if (!(flags & RLT_PACE_KEEP_WHOLE) || var != RLT_VAR_SEND)
		return 0;
	if (flags & RLT_PACE_NONBLOCK)
		return total <= rlt__piece(rs, var, mask);
	return total <= rlt__whole_blocking(rs, var, mask);
}

/*
 * Starts pacing a stream call of `total` bytes under `mask` of var. Whole: a send with
 * RLT_PACE_KEEP_WHOLE no larger than rlt__whole (threads that share a socket rely on a send
 * the kernel would take whole not being torn by another thread's pieces). After: a blocking
 * receive under rules that admit every charge (rlt__always_admits): it waits for data holding
 * no reservation (a hundred threads blocked on idle connections would otherwise hold a hundred
 * pieces of the budget and hold up the busy ones), then is charged what came. Else pieces.
 */
void rlt__pace_begin(struct rlt__pace *p, const struct rlt__ruleset *rs, enum rlt_var var,
                     uint32_t mask, uint64_t total, unsigned flags);

/*
 * Whether a call fails with EAGAIN, nothing charged: a non-blocking one (RLT_PACE_NONBLOCK,
 * not RLT_PACE_UNHELD) whose budget does not allow it now, which is when a wait holds its
 * socket back (rlt__ready_at, at `now`): what the waits report and what the call does are one
 * decision. A call the budget allows in part moves that part (rlt__pace_piece); a reject rule
 * is the charge's to refuse, with its errno. Read only for a non-blocking call.
 */
int rlt__pace_refuses(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask, void *states,
                      const struct rlt__peer *peer, unsigned flags, rlt_ns_t now);

/* rlt__pace_piece's look at the budget (a receive, or a non-blocking send, in pieces). */
uint64_t rlt__pace_piece_budget(const struct rlt__pace *p, struct rlt__ruleset *rs, void *states,
                                rlt_ns_t now, uint64_t piece);

/*
 * The size of the next real call (> 0 while p->done < p->total). Pieces: a receive asks the
 * kernel for no more than the budget allows now (below half a piece a delay rule waits for a
 * whole one rather than read a few bytes at a time at full CPU; a reject rule takes what there
 * is); a non-blocking send or receive moves what the budget allows now when that is more than
 * a piece.
 * rs, states and now are read only in those two cases (rlt__available). Inline, as is
 * rlt__pace_after: a conforming send pays for no call it does not need.
 */
static inline uint64_t rlt__pace_piece(const struct rlt__pace *p, struct rlt__ruleset *rs,
                                       void *states, rlt_ns_t now)
{
	uint64_t want = p->total - p->done;
	uint64_t piece = want < p->piece_max ? want : p->piece_max;

	if (p->mode != RLT_PACE_PIECES ||
	    (p->var != RLT_VAR_RECV && !(p->flags & RLT_PACE_NONBLOCK)))
		return piece;
	return rlt__pace_piece_budget(p, rs, states, now, piece);
}

/* Whether the call is charged after its real call (RLT_PACE_AFTER) rather than before. */
static inline int rlt__pace_charge_after(const struct rlt__pace *p)
{
	return p->mode == RLT_PACE_AFTER;
}

/*
 * After a real call asked for `piece` bytes moved n >= 0: counts them, and says whether the
 * call goes on (1) or returns p->done now (0). It ends when all has moved, at the end of the
 * stream, after one piece of a receive without MSG_WAITALL or of a non-blocking send, on a
 * short piece (the kernel took or had no more: non-blocking, or a signal), and when
 * `interrupted`: the thread has a signal handler to run and data has moved, so the call
 * returns the count, as the kernel's own blocking call does.
 */
static inline int rlt__pace_after(struct rlt__pace *p, uint64_t piece, uint64_t n,
                                  int interrupted)
{
	p->done += n;
	if (n == 0 || p->done >= p->total || interrupted)
		return 0;
	if (p->var == RLT_VAR_RECV && !(p->flags & RLT_PACE_WAITALL))
		return 0;
	if (p->var == RLT_VAR_SEND && (p->flags & RLT_PACE_NONBLOCK))
		return 0;
	/* a short piece: the kernel took or had no more (non-blocking after all, or a signal) */
	return n >= piece;
}

#endif
