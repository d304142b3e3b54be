/*
 * pacing.c: the pacing of a stream send or receive, decided once for both fronts (see
 * pacing.h for the three questions and who asks them): the rules live here, not in the hooks,
 * so that the decision stays pure and tested apart from the calls that carry it out.
 */
#include "charge.h"
#include "pacing.h"
#include "ready.h"

/* How much time of the rate one real call moves at most: small enough that a long transfer
 * is smooth at any one-second view, large enough that the number of system calls stays low. */
#define PIECE_NS (10 * 1000 * 1000ull)
/* ... but never a piece below this many bytes unless the burst itself is smaller. */
#define PIECE_MIN 256u

void rlt__pace_begin(struct rlt__pace *p, const struct rlt__ruleset *rs, enum rlt_var var,
                     uint32_t mask, uint64_t total, unsigned flags)
{
	int nonblock = (flags & RLT_PACE_NONBLOCK) != 0;

	p->var = var;
	p->mask = mask;
	p->flags = flags;
	p->total = total;
	p->done = 0;
	p->rejects = 0;
	p->peer = NULL;
	if (rlt__pace_whole(rs, var, mask, total, flags)) {
		/* the common case, first: a send that conforms goes whole, with nothing else read */
		p->mode = RLT_PACE_WHOLE;
		p->piece_max = total;
		return;
	}
	p->piece_max = rlt__piece(rs, var, mask);
	p->mode = RLT_PACE_PIECES;
	if (var == RLT_VAR_RECV) {
		p->rejects = rlt__rejects(rs, var, mask);
		if (!nonblock && rlt__always_admits(rs, var, mask))
			p->mode = RLT_PACE_AFTER;
	}
}

uint64_t rlt__pace_piece_budget(const struct rlt__pace *p, struct rlt__ruleset *rs, void *states,
                                rlt_ns_t now, uint64_t piece)
{
	uint64_t a = rlt__available_peer(rs, p->var, p->mask, states, p->peer, now);

	if (p->var == RLT_VAR_RECV) {
		/* What trickled in during the last call is not worth a call of its own: taking it
		 * would read a few bytes at a time at full CPU. */
		if (a < piece && (a >= piece / 2 || (a && p->rejects))) {
			piece = a;
		} else if ((p->flags & RLT_PACE_NONBLOCK) && a > piece) {
			/* a non-blocking receive takes what the budget allows now, as a send
			 * does: an edge-triggered reader handed one piece of what the kernel
			 * holds, with budget left, takes the short read for "drained" and is
			 * never told again (no new edge comes while its sender waits) */
			uint64_t want = p->total - p->done;
			piece = a < want ? a : want;
		}
	} else {
		/* a non-blocking send: what the budget allows now, if that is at least one piece
		 * (an event loop that offers much is not made to come back for each piece) */
		uint64_t want = p->total - p->done;
		if (a > piece)
			piece = a < want ? a : want;
	}
	return piece;
}

int rlt__pace_refuses(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask, void *states,
                      const struct rlt__peer *peer, unsigned flags, rlt_ns_t now)
{
	if ((flags & (RLT_PACE_NONBLOCK | RLT_PACE_UNHELD)) != RLT_PACE_NONBLOCK)
		return 0;
	return rlt__ready_at(rs, var, mask, states, peer, now) > now;
}

/* ----- a rule's piece and whole, and what the rules of a call do ----- */

uint64_t rlt__piece(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask)
{
	uint64_t piece = UINT64_MAX;

	for (unsigned i = 0; i < rs->n[var]; i++)
		if ((mask & (1u << i)) && rlt__ver(&rs->rules[var][i])->piece < piece)
			piece = rlt__ver(&rs->rules[var][i])->piece;
	return piece;
}

uint64_t rlt__whole(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask, int nonblock)
{
	return nonblock ? rlt__piece(rs, var, mask) : rlt__whole_blocking(rs, var, mask);
}

int rlt__rejects(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask)
{
	for (unsigned i = 0; i < rs->n[var]; i++)
		if ((mask & (1u << i)) && rlt__ver(&rs->rules[var][i])->action == RLT_ACTION_REJECT)
			return 1;
	return 0;
}

int rlt__always_admits(const struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask)
{
	for (unsigned i = 0; i < rs->n[var]; i++) {
		const struct rlt__rt_rule *r = &rs->rules[var][i];
		const struct rlt__rule_ver *cur = rlt__ver(r);
		if (!(mask & (1u << i)) || cur->action == RLT_ACTION_DRY_RUN)
			continue;
		if (cur->action != RLT_ACTION_DELAY || cur->params.max_wait_ns != RLT_NS_NEVER ||
		    cur->params.algo != RLT_ALGO_TOKEN || r->redis)
			return 0;
	}
	return 1;
}

uint64_t rlt__piece_of(enum rlt_unit unit, const struct rlt_params *p)
{
	unsigned __int128 ten_ms = (unsigned __int128)p->rate_num * PIECE_NS / p->rate_den_ns;
	uint64_t lo = p->burst < PIECE_MIN ? p->burst : PIECE_MIN;
	uint64_t piece = ten_ms > p->burst ? p->burst : (uint64_t)ten_ms;

	if (unit != RLT_UNIT_BYTES)
		return UINT64_MAX;
	return piece < lo ? lo : piece;
}

/* See rlt__whole. */
uint64_t rlt__whole_of(enum rlt_unit unit, const struct rlt_params *p, uint64_t piece)
{
	uint64_t whole = p->burst;

	if (unit != RLT_UNIT_BYTES)
		return UINT64_MAX;
	if (p->max_wait_ns != RLT_NS_NEVER) { /* delay rules only: reject never waits */
		unsigned __int128 in_wait =
			(unsigned __int128)p->rate_num * p->max_wait_ns / p->rate_den_ns;
		if (in_wait < whole)
			whole = (uint64_t)in_wait;
	}
	return whole > piece ? whole : piece;
}
