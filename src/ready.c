/*
 * ready.c: when a throttled socket's direction may proceed (ready.h). Built on each rule's
 * available units (charge.c rlt__available_rule) and its rate: how long the missing units take
 * to come. A window's units come back at its boundary, not by the rate.
 */
#include "charge.h"
#include "engine.h"
#include "ready.h"

/* The units a call must find on rule r for it not to wait (see rlt__ready_at). */
static uint64_t need_of(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                        enum rlt_var var)
{
	uint64_t need;

	if (r->unit != RLT_UNIT_BYTES || v->piece == UINT64_MAX)
		return 1;
	need = var == RLT_VAR_RECV ? v->piece / 2 : v->piece;
	return need ? need : 1;
}

/* How long `missing` units take to come under p, from now. */
static rlt_ns_t time_for(const struct rlt_params *p, uint64_t missing, rlt_ns_t now)
{
	unsigned __int128 ns;

	switch (p->algo) {
	case RLT_ALGO_FIXED_WINDOW:
		if (p->window_ns)
			return p->window_ns - now % p->window_ns;
		break;
	case RLT_ALGO_SLIDING_WINDOW:
		if (p->sub_ns)
			return p->sub_ns - now % p->sub_ns;
		break;
	default:
		break;
	}
	if (!p->rate_num)
		return RLT_NS_NEVER;
	ns = ((unsigned __int128)missing * p->rate_den_ns + p->rate_num - 1) / p->rate_num;
	return ns > RLT_NS_NEVER - now ? RLT_NS_NEVER : (rlt_ns_t)ns;
}

rlt_ns_t rlt__ready_at(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                       void *conn_block, const struct rlt__peer *peer, rlt_ns_t now)
{
	rlt_ns_t at = now;

	for (unsigned i = 0; i < rs->n[var]; i++) {
		const struct rlt__rt_rule *r = &rs->rules[var][i];
		const struct rlt__rule_ver *v;
		uint64_t need, a;

		if (!(mask & (1u << i)))
			continue;
		v = rlt__ver(r);
		if (v->action != RLT_ACTION_DELAY)
			continue;
		need = need_of(r, v, var);
		a = rlt__available_rule(r, v, conn_block, peer, now);
		if (a >= need)
			continue;
		rlt_ns_t wait;
		void *st = rlt__rule_state(r, v, conn_block);
		if (st && !r->redis && (v->params.algo == RLT_ALGO_TOKEN ||
		                        v->params.algo == RLT_ALGO_LEAKY)) {
			/* a bucket of this process or segment: exactly when, reservations ahead
			 * of it included */
			rlt_ns_t go = rlt__gcra_go_at(&v->params, st, need);
			if (go == RLT_NS_NEVER)
				return RLT_NS_NEVER;
			wait = go > now ? go - now : 0;
		} else {
			wait = time_for(&v->params, need - a, now);
		}
		if (wait == RLT_NS_NEVER)
			return RLT_NS_NEVER;
		/* never early: a call told "ready" that finds a unit short waits for a whole
		 * piece (src/pacing.c), past the deadline this is for */
		if (wait == 0)
			continue;
		at = rlt__ready_later(at, now + wait);
	}
	return at;
}
