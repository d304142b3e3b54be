/*
 * charge.c: one call against every rule that applies to it. Reserve everywhere first, then wait
 * once for the latest slot: a call waits for its strictest rule, and a rejection anywhere gives
 * back what the other rules had already granted, so a rejected call leaves every budget as it
 * was (SPEC §4).
 */
#include <errno.h>

#include "clock.h"
#include "keytab.h"
#include "policy.h"
#include "publish.h"
#include "scope_redis.h"
#include "stats_count.h"
#include "wait.h"

static uint64_t cost_for(const struct rlt_rule *r, uint64_t bytes, uint64_t msgs)
{
	switch (r->unit) {
	case RLT_UNIT_BYTES:
		return bytes;
	case RLT_UNIT_MSGS:
		return msgs;
	default:
		return 1; /* calls: connect and accept */
	}
}

/* NULL for a connection-scope rule of a socket that has no block (no memory could be had):
 * such a rule is then not applied rather than applied to a state that is not there; and for a
 * keyed rule, whose state is the key's (charge_at finds it, the ticket keeps it). */
static void *state_of(const struct rlt__rt_rule *r, void *conn_block)
{
	if (r->keytab)
		return NULL;
	if (r->state)
		return r->state;
	if (r->redis)
		return r->redis;
	return conn_block ? (char *)conn_block + r->conn_off : NULL;
}

/* A redis-scope rule decides through its lease (scope_redis.c); every other rule through the
 * engine on its state (process memory, a connection block or a shared segment alike). */
static enum rlt_verdict decide(const struct rlt__rt_rule *r, void *st, rlt_ns_t now,
                               uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	if (r->redis)
		return rlt__redis_decide(r->redis, now, cost, mode, at);
	return rlt_decide(&r->rule.params, st, now, cost, mode, at);
}

static void refund(const struct rlt__rt_rule *r, void *st, rlt_ns_t at, uint64_t units)
{
	if (r->redis)
		rlt__redis_refund(r->redis, at, units);
	else
		rlt_refund(&r->rule.params, st, at, units);
}


uint64_t rlt__available(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                        void *conn_block, rlt_ns_t now)
{
	uint64_t least = UINT64_MAX;

	for (unsigned i = 0; i < rs->n[var]; i++) {
		const struct rlt__rt_rule *r = &rs->rules[var][i];
		void *st = state_of(r, conn_block);
		if (!(mask & (1u << i)) || r->rule.unit != RLT_UNIT_BYTES || !st)
			continue;
		if (r->rule.action == RLT_ACTION_DRY_RUN)
			continue; /* it never holds a call back, so it never cuts one either */
		uint64_t a = r->redis ? rlt__redis_available(r->redis, now)
		                      : rlt_available(&r->rule.params, st, now);
		if (a < least)
			least = a;
	}
	return least;
}

/* Gives back what rules [0, upto) of a ticket took (a rejection further on). */
static void undo(struct rlt__ruleset *rs, struct rlt__ticket *t, unsigned upto)
{
	for (unsigned i = 0; i < upto; i++) {
		const struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if (!(t->mask & (1u << i)) || t->at[i] == RLT_NS_NEVER)
			continue;
		refund(r, r->keytab ? t->kstate[i] : state_of(r, t->conn_block), t->at[i],
		       cost_for(&r->rule, t->bytes, t->msgs));
	}
}

/* A keyed rule's decision: the key of the call's peer, its state found in the rule's table. */
static enum rlt_verdict decide_keyed(const struct rlt__rt_rule *r, const struct rlt__peer *peer,
                                     rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                     rlt_ns_t *at, void **kstate)
{
	struct rlt__key k;

	rlt__key_of(r->rule.key, r->rule.key_prefix4, r->rule.key_prefix6, peer,
	            peer ? peer->port : 0, &k);
	return rlt__keytab_decide(r->keytab, &k, now, cost, mode, at, kstate);
}

/*
 * A dry-run rule's decision, counted, never holding the call. Its budget is charged as delay's
 * would be (a reservation), so it stands where delay would have left it. What delay would have
 * made this call wait is its part of the lag of the budget behind the clock: the lag now less
 * the lag after the last call (the rest was counted then). For one stream the parts add up to
 * the delay the whole transfer would have taken. Reject would have refused a call that did not
 * conform at once.
 */
static void dry_run(struct rlt__ruleset *rs, struct rlt__rt_rule *r, enum rlt_verdict v,
                    rlt_ns_t now, rlt_ns_t at)
{
	uint64_t lag = v == RLT_DENY ? 0 : at > now ? at - now : 0;
	uint64_t before = atomic_exchange_explicit(&r->dry_lag, lag, memory_order_relaxed);

	rlt__count_dry(rs, r, lag > before ? lag - before : 0, v == RLT_DENY || at > now);
}

static int charge_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                     uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	rlt_ns_t go = now;
	uint32_t dry = 0;

	t->var = var;
	t->mask = mask;
	t->conn_block = conn_block;
	t->bytes = bytes;
	t->msgs = msgs;
	t->start = now;
	t->err = 0;
	rlt__pub_tick(rs->pub, now); /* the history: a compare, except once a second */
	for (unsigned i = 0; i < rs->n[var]; i++) {
		struct rlt__rt_rule *r = &rs->rules[var][i];
		rlt_ns_t at = now;

		void *st = state_of(r, conn_block);
		t->at[i] = RLT_NS_NEVER;
		if (!(mask & (1u << i)) || (!st && !r->keytab))
			continue;
		uint64_t cost = cost_for(&r->rule, bytes, msgs);
		enum rlt_mode mode =
			r->rule.action == RLT_ACTION_REJECT ? RLT_MODE_NOW : RLT_MODE_RESERVE;
		enum rlt_verdict v = r->keytab
			? decide_keyed(r, peer, now, cost, mode, &at, &t->kstate[i])
			: decide(r, st, now, cost, mode, &at);
		if (r->rule.action == RLT_ACTION_DRY_RUN) {
			dry_run(rs, r, v, now, at);
			dry |= 1u << i;
			if (v != RLT_DENY)
				t->at[i] = at; /* settled as any charge; the call does not wait for it */
			continue;
		}
		if (v == RLT_DENY) {
			undo(rs, t, i);
			t->err = r->rule.err;
			rlt__count_rejected(rs, r);
			return -1;
		}
		t->at[i] = at;
		if (at > go)
			go = at;
	}
	t->go = go;
	if (rs->stats_on)
		for (unsigned i = 0; i < rs->n[var]; i++)
			if ((mask & ~dry) & (1u << i))
				rlt__count_admitted(rs, &rs->rules[var][i], go - now);
	return 0;
}

void rlt__charge_waiting(struct rlt__ruleset *rs, const struct rlt__ticket *t, int d)
{
	if (!rs->stats_on)
		return;
	for (unsigned i = 0; i < rs->n[t->var]; i++) {
		struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if ((t->mask & (1u << i)) && t->at[i] != RLT_NS_NEVER && t->at[i] > t->start &&
		    r->rule.action != RLT_ACTION_DRY_RUN)
			rlt__count_waiting(r, d);
	}
}

int rlt__charge(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs)
{
	return charge_at(rs, t, var, mask, conn_block, NULL, bytes, msgs, rlt__now());
}

int rlt__charge_wait_peer(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                          uint64_t bytes, uint64_t msgs)
{
	if (charge_at(rs, t, var, mask, conn_block, peer, bytes, msgs, rlt__now()) != 0)
		return -1;
	if (t->go > t->start) {
		rlt__charge_waiting(rs, t, 1);
		rlt__sleep_until(t->go);
		rlt__charge_waiting(rs, t, -1);
	}
	return 0;
}

int rlt__charge_wait(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs)
{
	return rlt__charge_wait_at(rs, t, var, mask, conn_block, bytes, msgs, rlt__now());
}

int rlt__charge_wait_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                        uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs,
                        rlt_ns_t now)
{
	if (charge_at(rs, t, var, mask, conn_block, NULL, bytes, msgs, now) != 0)
		return -1;
	if (t->go > t->start) {
		rlt__charge_waiting(rs, t, 1);
		rlt__sleep_until(t->go);
		rlt__charge_waiting(rs, t, -1);
	}
	return 0;
}

int rlt__charge_wait_intr(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs,
                          rlt_ns_t now)
{
	if (charge_at(rs, t, var, mask, conn_block, NULL, bytes, msgs, now) != 0)
		return -1;
	if (t->go > t->start) {
		rlt__charge_waiting(rs, t, 1);
		int rc = rlt__sleep_until_intr(t->go);
		rlt__charge_waiting(rs, t, -1);
		if (rc != 0)
			return 1;
	}
	return 0;
}

void rlt__settle(struct rlt__ruleset *rs, struct rlt__ticket *t, uint64_t bytes_used,
                 uint64_t msgs_used)
{
	for (unsigned i = 0; i < rs->n[t->var]; i++) {
		struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if (!(t->mask & (1u << i)) || t->at[i] == RLT_NS_NEVER)
			continue;
		uint64_t took = cost_for(&r->rule, t->bytes, t->msgs);
		uint64_t used = cost_for(&r->rule, bytes_used, msgs_used);
		if (r->rule.unit == RLT_UNIT_CALLS)
			used = msgs_used ? 1 : 0;
		if (used < took)
			refund(r, r->keytab ? t->kstate[i] : state_of(r, t->conn_block), t->at[i],
			       took - used);
		rlt__count_units(rs, r, used < took ? used : took);
	}
}

