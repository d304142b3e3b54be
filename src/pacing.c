/*
 * pacing.c: the pacing of a stream send or receive, decided once for both fronts (see
 * pacing.h for the three questions and who asks them). The preload and the supervisor used to
 * each carry a copy of these rules, and the copies drifted: the supervisor read a whole piece
 * where the preload read what the budget allowed, and held a reservation while it waited for
 * data where the preload held none. The fronts now differ only in how they wait.
 */
#include "charge.h"
#include "pacing.h"

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
		if (a < piece && (a >= piece / 2 || (a && p->rejects)))
			piece = a;
	} else {
		/* a non-blocking send: what the budget allows now, if that is at least one piece
		 * (an event loop that offers much is not made to come back for each piece) */
		uint64_t want = p->total - p->done;
		if (a > piece)
			piece = a < want ? a : want;
	}
	return piece;
}
