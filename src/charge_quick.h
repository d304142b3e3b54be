/*
 * charge_quick.h: the charge of a call that conforms, inline in the hook that makes it.
 * rlthrottle(7) BEHAVIOUR promises such a call a clock read and an atomic update per matching
 * rule; a call into charge.c and back costs as much again in saved registers and arguments,
 * so the short way is built into each caller. Anything else takes the long way in charge.c.
 */
#ifndef RLT_CHARGE_QUICK_H
#define RLT_CHARGE_QUICK_H

#include <stdint.h>

#include "charge.h"
#include "engine_gcra.h"
#include "policy.h"
#include "publish.h"
#include "stats_count.h"

/* What a call of `bytes` bytes and `msgs` messages costs a rule counting in unit. */
static inline uint64_t rlt__cost_for(enum rlt_unit unit, uint64_t bytes, uint64_t msgs)
{
	switch (unit) {
	case RLT_UNIT_BYTES:
		return bytes;
	case RLT_UNIT_MSGS:
		return msgs;
	default:
		return 1; /* calls: connect and accept */
	}
}

/* The long way of rlt__charge_at_hot (charge.c): every rule of the ticket's mask, with what
 * a tick and shared segments ask first. The call (var, mask, bytes, msgs, its clock reading
 * as start) is the ticket rlt__charge_at_hot has filled in. */
int rlt__charge_long(struct rlt__ruleset *rs, struct rlt__ticket *t, const struct rlt__peer *peer,
                     int ticked);

/*
 * The short way: one rule applies (todo has one bit), a token bucket of this process's (its
 * state in the rule's block) that delays or rejects, and the call conforms now. The ticket,
 * the state and the counters are then exactly what the long way leaves, with one decision and
 * no loop. 0 when it is not such a call: nothing was taken or counted, and the long way
 * decides it whole.
 */
static inline __attribute__((always_inline)) int rlt__charge_quick(
	struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var, uint32_t todo,
	uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	unsigned i = (unsigned)__builtin_ctz(todo);
	struct rlt__rt_rule *r = &rs->rules[var][i];
	const struct rlt__rule_ver *ver = rlt__ver(r);
	uint64_t cost = rlt__cost_for(r->unit, bytes, msgs);

	__builtin_prefetch(r->st, 1); /* counted below: its miss overlaps the decision */
	if (__builtin_expect(r->keytab || r->redis || !ver->state || ver->params.algo != RLT_ALGO_TOKEN ||
	                         ver->action == RLT_ACTION_DRY_RUN || cost == 0 ||
	                         !rlt__token_take_now(&ver->params, ver->state, now, cost), 0))
		return 0;
	t->rule[i].ver = ver;
	t->rule[i].at = now;
	t->go = now;
	/* as the long way's: a calls rule's charge with msgs 0 is settled the long way */
	t->counted = msgs != 0 || var == RLT_VAR_SEND || var == RLT_VAR_RECV;
	if (rs->stats_on) {
		if (t->counted)
			rlt__count_went(r, cost);
		else
			rlt__count_admitted(rs, r, 0);
	}
	return 1;
}

/* rlt__charge_at (charge.h), its short way inline. */
static inline __attribute__((always_inline)) int rlt__charge_at_hot(
	struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var, uint32_t mask,
	void *conn_block, const struct rlt__peer *peer, uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	uint32_t todo = mask & ((1u << rs->n[var]) - 1);

	t->var = var;
	t->mask = mask;
	t->conn_block = conn_block;
	t->bytes = bytes;
	t->msgs = msgs;
	t->start = now;
	t->err = 0;
	t->dry = 0;
	t->counted = 0;
	t->posm = 0;
	/* A set request is looked for at the page's tick (every RLT_PUB_CHECK_NS while calls come,
	 * at once after a quiet spell): a conforming call pays the tick's compare only. A shared
	 * segment's set is followed at every call: until it is, this process would charge a
	 * budget the others have left (the long way follows it first). */
	int ticked = rlt__pub_tick(rs->pub, now);
	if (__builtin_expect(!ticked && !rs->nshared && todo && !(todo & (todo - 1)), 1) &&
	    rlt__charge_quick(rs, t, var, todo, bytes, msgs, now))
		return 0;
	return rlt__charge_long(rs, t, peer, ticked);
}

#endif
