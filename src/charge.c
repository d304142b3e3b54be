/*
 * charge.c: one call against every rule that applies to it. Reserve everywhere first, then wait
 * once for the latest slot: a call waits for its strictest rule, and a rejection anywhere gives
 * back what the other rules had already granted, so a rejected call leaves every budget as it
 * was (rlthrottle(7) BEHAVIOUR).
 */
#include <errno.h>

#include "charge.h"
#include "charge_quick.h"
#include "clock.h"
#include "engine.h"
#include "engine_gcra.h"
#include "keytab.h"
#include "keytab_key.h"
#include "policy.h"
#include "rule_set.h"
#include "scope_redis_key.h"
#include "shm_set.h"
#include "publish.h"
#include "scope_redis.h"
#include "stats_count.h"
#include "wait.h"

/* NULL for a connection-scope rule of a socket that has no block (no memory could be had):
 * such a rule is then not applied rather than applied to a state that is not there; and for a
 * keyed rule, whose state is the key's (charge_at finds it, the ticket keeps it). */
static void *state_of(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                      void *conn_block)
{
	if (r->keytab)
		return NULL;
	if (v->state)
		return v->state;
	if (r->redis)
		return r->redis;
	return conn_block ? (char *)conn_block + r->conn_off : NULL;
}

void *rlt__rule_state(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                      void *conn_block)
{
	return state_of(r, v, conn_block);
}

/* A redis-scope rule decides through its lease (scope_redis.c); every other rule through the
 * engine on its state (process memory, a connection block or a shared segment alike). */
static enum rlt_verdict decide(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                               void *st, rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                               rlt_ns_t *at)
{
	if (r->redis)
		return rlt__redis_decide(r->redis, now, cost, mode, at);
	return rlt_decide(&v->params, st, now, cost, mode, at);
}

/* Units go back to the state in force now: a refund is in units, which every version of a
 * rule counts alike (rlt_params_retune), and a state a set left behind is no one's budget. */
static void refund(const struct rlt__rt_rule *r, void *kstate, void *conn_block, rlt_ns_t at,
                   uint64_t units)
{
	const struct rlt__rule_ver *v = rlt__ver(r);
	void *st = r->keytab ? kstate : state_of(r, v, conn_block);

	if (r->redis && r->keytab)
		rlt__redis_refund_key(r->redis, kstate, at, units);
	else if (r->redis)
		rlt__redis_refund(r->redis, at, units);
	else if (st)
		rlt_refund(&v->params, st, at, units);
}

/* A set waiting for this process (its control area, or a shared segment's generation): the
 * hot path's part is a load and a compare for each (rule_set.c applies). */
static inline void follow_sets(struct rlt__ruleset *rs)
{
	if (__builtin_expect(rs->pub != NULL, 1) && rlt__ctl_pending(rs))
		rlt__ctl_serve(rs);
	if (__builtin_expect(rs->nshared != 0, 0))
		rlt__shm_follow_all(rs);
}


/* A keyed rule's key for the call's peer (NULL: "(no address)"); key=port takes its port. */
static inline void key_of_peer(const struct rlt__rt_rule *r, const struct rlt__peer *peer,
                               struct rlt__key *k)
{
	rlt__key_of(r->rule.key, r->rule.key_prefix4, r->rule.key_prefix6, peer,
	            peer ? peer->port : 0, k);
}

/* A keyed rule's budget is its key's: a send to one client is cut by that client's budget,
 * not another's. */
static uint64_t available_keyed(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                                const struct rlt__peer *peer, rlt_ns_t now)
{
	struct rlt__key k;

	key_of_peer(r, peer, &k);
	return rlt__keytab_available(r->keytab, &v->params, &k, now);
}

uint64_t rlt__available_rule(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                             void *conn_block, const struct rlt__peer *peer, rlt_ns_t now)
{
	void *st = state_of(r, v, conn_block);

	if (!st && !r->keytab)
		return UINT64_MAX; /* a connection-scope rule of a socket with no block */
	return r->keytab  ? available_keyed(r, v, peer, now)
	       : r->redis ? rlt__redis_available(r->redis, now)
	                  : rlt_available(&v->params, st, now);
}

uint64_t rlt__available_peer(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                             void *conn_block, const struct rlt__peer *peer, rlt_ns_t now)
{
	uint64_t least = UINT64_MAX;

	for (unsigned i = 0; i < rs->n[var]; i++) {
		const struct rlt__rt_rule *r = &rs->rules[var][i];
		const struct rlt__rule_ver *v = rlt__ver(r);
		if (!(mask & (1u << i)) || r->rule.unit != RLT_UNIT_BYTES)
			continue;
		if (v->action == RLT_ACTION_DRY_RUN)
			continue; /* it never holds a call back, so it never cuts one either */
		uint64_t a = rlt__available_rule(r, v, conn_block, peer, now);
		if (a < least)
			least = a;
	}
	return least;
}

uint64_t rlt__available(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                        void *conn_block, rlt_ns_t now)
{
	return rlt__available_peer(rs, var, mask, conn_block, NULL, now);
}

/* Gives back what rules [0, upto) of a ticket took (a rejection further on). */
static void undo(struct rlt__ruleset *rs, struct rlt__ticket *t, unsigned upto)
{
	for (unsigned i = 0; i < upto; i++) {
		const struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if (!(t->mask & (1u << i)) || t->rule[i].at == RLT_NS_NEVER)
			continue;
		refund(r, t->kstate[i], t->conn_block, t->rule[i].at,
		       rlt__cost_for(r->unit, t->bytes, t->msgs));
	}
}

/* A keyed rule's decision: the key of the call's peer, its state found in the rule's table. */
static enum rlt_verdict decide_keyed(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                                     const struct rlt__peer *peer, rlt_ns_t now, uint64_t cost,
                                     enum rlt_mode mode, rlt_ns_t *at, void **kstate)
{
	struct rlt__key k;

	key_of_peer(r, peer, &k);
	if (r->redis) /* each key's lease (scope_redis.c) */
		return rlt__redis_decide_key(r->redis, &k, now, cost, mode, at, kstate);
	return rlt__keytab_decide(r->keytab, &v->params, &k, now, cost, mode, at, kstate);
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
                    rlt_ns_t now, rlt_ns_t at, void *kstate)
{
	uint64_t lag = v == RLT_DENY ? 0 : at > now ? at - now : 0;
	_Atomic uint64_t *lagp = &r->dry_lag;
	struct rlt__keydry *d = NULL;
	int refuse = v == RLT_DENY || at > now;

	/* a keyed rule's lag is its key's: the keys' budgets lag each on its own */
	if (r->keydry && kstate) {
		uint64_t seq;
		long i = rlt__keytab_slot_of(r->keytab, kstate, &seq);
		if (i >= 0) {
			d = &r->keydry[i];
			if (atomic_load_explicit(&d->seq, memory_order_relaxed) != seq) {
				atomic_store_explicit(&d->lag, 0, memory_order_relaxed);
				atomic_store_explicit(&d->wait_ns, 0, memory_order_relaxed);
				atomic_store_explicit(&d->refused, 0, memory_order_relaxed);
				atomic_store_explicit(&d->seq, seq, memory_order_relaxed);
			}
			lagp = &d->lag;
		}
	}
	uint64_t before = atomic_exchange_explicit(lagp, lag, memory_order_relaxed);
	uint64_t part = lag > before ? lag - before : 0;
	if (d) {
		atomic_fetch_add_explicit(&d->wait_ns, part, memory_order_relaxed);
		if (refuse)
			atomic_fetch_add_explicit(&d->refused, 1, memory_order_relaxed);
	}
	rlt__count_dry(rs, r, part, refuse);
}

/* The statistics of a charge taken: each rule of the mask let the call go (a dry-run rule was
 * counted by dry_run), and when the call goes at once its units are counted now (t->counted),
 * not at the settle. */
static void count_charge(struct rlt__ruleset *rs, const struct rlt__ticket *t, uint32_t mask)
{
	uint64_t waited = t->go - t->start;

	/* the common case, a call that went at once on rules that all applied and none of them
	 * dry-run: each rule's three counters in one step */
	if (__builtin_expect(t->counted && !t->dry, 1)) {
		uint32_t m = mask;
		for (; m; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctz(m);
			if (t->rule[i].at == RLT_NS_NEVER)
				break;
			struct rlt__rt_rule *r = &rs->rules[t->var][i];
			rlt__count_went(r, rlt__cost_for(r->unit, t->bytes, t->msgs));
		}
		if (!m)
			return;
		mask = m; /* the rest (from a rule that did not apply) the long way */
	}
	for (; mask; mask &= mask - 1) {
		unsigned i = (unsigned)__builtin_ctz(mask);
		struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if (!(t->dry & (1u << i)))
			rlt__count_admitted(rs, r, waited);
		if (t->counted && t->rule[i].at != RLT_NS_NEVER)
			rlt__count_units(rs, r, rlt__cost_for(r->unit, t->bytes, t->msgs));
	}
}

/* The decision of a rule that is not a plain one of the charge's short way: keyed, redis, or
 * of connection scope. -1: the rule has no state for this call (not applied). Out of line, so
 * that the short way keeps its registers. */
static __attribute__((noinline)) int decide_other(struct rlt__rt_rule *r,
                                                  const struct rlt__rule_ver *ver,
                                                  struct rlt__ticket *t, unsigned i,
                                                  const struct rlt__peer *peer, rlt_ns_t now,
                                                  uint64_t cost, enum rlt_mode mode, rlt_ns_t *at)
{
	void *st;

	if (r->keytab)
		return (int)decide_keyed(r, ver, peer, now, cost, mode, at, &t->kstate[i]);
	st = state_of(r, ver, t->conn_block);
	if (!st)
		return -1;
	return (int)decide(r, ver, st, now, cost, mode, at);
}

/* A dry-run rule's decision, or a rejection (then every rule before i is given back): -1 when
 * the charge fails. Out of line, as decide_other. */
static __attribute__((noinline)) int charge_unusual(struct rlt__ruleset *rs,
                                                    struct rlt__ticket *t,
                                                    struct rlt__rt_rule *r,
                                                    const struct rlt__rule_ver *ver,
                                                    enum rlt_verdict v, unsigned i, rlt_ns_t at)
{
	if (ver->action == RLT_ACTION_DRY_RUN) {
		dry_run(rs, r, v, t->start, at, r->keytab ? t->kstate[i] : NULL);
		t->dry |= 1u << i;
		/* settled as any charge; the call does not wait for it */
		t->rule[i].at = v != RLT_DENY ? at : RLT_NS_NEVER;
		return 0;
	}
	t->rule[i].at = RLT_NS_NEVER;
	undo(rs, t, i);
	t->err = ver->err;
	rlt__count_rejected(rs, r);
	return -1;
}

/*
 * The charge of one call. A call that conforms (the common case: a process-scope rule that
 * delays, the engine's state in the rule's block) costs, per matching rule, the block's load,
 * the engine's decision (one atomic update of its state) and, with statistics on, its
 * counters; the clock was read once by the caller. Such a ticket is counted whole here, units
 * included (t->counted), so that a call that then moves all it was charged has nothing left
 * to settle (rlt__settle returns at once). A ticket that waits counts its units when settled.
 * This is its long way (charge_quick.h holds the short one, inline in the callers): out of
 * line, so that the short way builds none of its frame.
 */
int rlt__charge_long(struct rlt__ruleset *rs, struct rlt__ticket *t, const struct rlt__peer *peer,
                     int ticked)
{
	const enum rlt_var var = t->var;
	const uint64_t bytes = t->bytes, msgs = t->msgs;
	const rlt_ns_t now = t->start;
	const uint32_t todo = t->mask & ((1u << rs->n[var]) - 1);
	rlt_ns_t go = now;

	if (ticked && rlt__ctl_pending(rs))
		rlt__ctl_serve(rs);
	if (ticked && rs->n[RLT_VAR_CONNS])
		rlt__pub_conns(rs); /* a shared count moves with other processes' connections */
	if (__builtin_expect(rs->nshared != 0, 0))
		rlt__shm_follow_all(rs);
	/* the rules of the mask only: rule[i].at of a rule outside it is never read */
	for (uint32_t m = todo; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		struct rlt__rt_rule *r = &rs->rules[var][i];
		const struct rlt__rule_ver *ver = rlt__ver(r);
		uint64_t cost = rlt__cost_for(r->unit, bytes, msgs);
		enum rlt_mode mode =
			ver->action == RLT_ACTION_REJECT ? RLT_MODE_NOW : RLT_MODE_RESERVE;
		rlt_ns_t at = now;
		int v;

		__builtin_prefetch(r->st, 1); /* counted below: its miss overlaps the decision */
		/* a token bucket's decision by name: rlt_decide's dispatch is a call more on
		 * every call's path (a cost of 0 goes at once there, without the engine) */
		if (__builtin_expect(!r->keytab && !r->redis && ver->state, 1))
			v = __builtin_expect(ver->params.algo == RLT_ALGO_TOKEN && cost != 0, 1)
			            ? (int)rlt__token_decide(&ver->params, ver->state, now, cost,
			                                     mode, &at)
			            : (int)rlt_decide(&ver->params, ver->state, now, cost, mode, &at);
		else
			v = decide_other(r, ver, t, i, peer, now, cost, mode, &at);
		if (v < 0) {
			t->rule[i].at = RLT_NS_NEVER;
			continue;
		}
		t->rule[i].ver = ver; /* read only where .at is set (rlt__ticket_refresh) */
		if (__builtin_expect(ver->action == RLT_ACTION_DRY_RUN || v == RLT_DENY, 0)) {
			if (charge_unusual(rs, t, r, ver, (enum rlt_verdict)v, i, at) != 0) {
				if (ticked && rs->nkeyed)
					rlt__pub_keys(rs, now);
				return -1;
			}
			continue;
		}
		t->rule[i].at = at;
		if (at > go)
			go = at;
	}
	t->go = go;
	/* a calls rule (connect, accept) takes 1 even for msgs 0, which a settle of 0 gives
	 * back: such a charge is settled the long way */
	t->counted = go == now && (msgs != 0 || var == RLT_VAR_SEND || var == RLT_VAR_RECV);
	/* The busiest keys after this call's decisions, so that the view holds the last calls'
	 * keys when the traffic stops (no later call comes to refresh it). */
	if (__builtin_expect(ticked, 0) && rs->nkeyed)
		rlt__pub_keys(rs, now);
	if (rs->stats_on)
		count_charge(rs, t, todo);
	return 0;
}

/* The rules of a ticket that make it wait. */
static uint32_t waiting_mask(const struct rlt__ruleset *rs, const struct rlt__ticket *t)
{
	uint32_t m = 0;

	for (unsigned i = 0; i < rs->n[t->var]; i++)
		if ((t->mask & ~t->dry & (1u << i)) && t->rule[i].at != RLT_NS_NEVER &&
		    t->rule[i].at > t->start)
			m |= 1u << i;
	return m;
}

/* Threads waiting now, per rule that makes the call wait (for `rlthrottle top`): off the
 * conforming path, a delayed call only. The preload's waits give back the mask they counted
 * at the start (a set meanwhile may move rule[].at). */
static void count_waiting(struct rlt__ruleset *rs, const struct rlt__ticket *t, int d,
                          uint32_t m)
{
	for (unsigned i = 0; i < rs->n[t->var]; i++)
		if (m & (1u << i))
			rlt__count_waiting(&rs->rules[t->var][i], d);
}

uint32_t rlt__charge_waiting_start(struct rlt__ruleset *rs, const struct rlt__ticket *t)
{
	uint32_t m = rs->stats_on ? waiting_mask(rs, t) : 0;

	count_waiting(rs, t, 1, m);
	return m;
}

void rlt__charge_waiting_end(struct rlt__ruleset *rs, const struct rlt__ticket *t, uint32_t m)
{
	count_waiting(rs, t, -1, m);
}

int rlt__charge(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs)
{
	return rlt__charge_at_hot(rs, t, var, mask, conn_block, NULL, bytes, msgs, rlt__now());
}

int rlt__charge_peer(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                     uint64_t bytes, uint64_t msgs)
{
	return rlt__charge_at_hot(rs, t, var, mask, conn_block, peer, bytes, msgs, rlt__now());
}

int rlt__charge_wait_peer(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                          uint64_t bytes, uint64_t msgs)
{
	return rlt__charge_wait_at(rs, t, var, mask, conn_block, peer, bytes, msgs, rlt__now());
}

int rlt__charge_wait(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs)
{
	return rlt__charge_wait_at(rs, t, var, mask, conn_block, NULL, bytes, msgs, rlt__now());
}

int rlt__ticket_refresh(struct rlt__ruleset *rs, struct rlt__ticket *t)
{
	int moved = 0;

	follow_sets(rs);
	for (unsigned i = 0; i < rs->n[t->var]; i++) {
		const struct rlt__rule_ver *cur = rlt__ver(&rs->rules[t->var][i]);
		if (!(t->mask & (1u << i)) || t->rule[i].at == RLT_NS_NEVER ||
		    t->rule[i].ver == cur)
			continue;
		/* the sets since the ticket's, oldest first: each maps the place in the queue on
		 * (more than RLT_SET_CHAIN_MAX sets during one wait map from the ticket's straight
		 * to the oldest kept: the go time is then approximate, never unbounded) */
		const struct rlt__rule_ver *chain[RLT_SET_CHAIN_MAX];
		unsigned n = 0;
		for (const struct rlt__rule_ver *v = cur;
		     v && v != t->rule[i].ver && n < RLT_SET_CHAIN_MAX; v = v->prev)
			chain[n++] = v;
		const struct rlt__rule_ver *from = t->rule[i].ver;
		uint64_t pos = t->posm & (1u << i) ? t->pos[i]
		                                    : rlt__params_pos(&from->params, t->rule[i].at);
		while (n--) {
			/* a set that carried the budget gave the rule a new state (rule_set.c) */
			pos = rlt__params_remap_pos(&from->params, &chain[n]->params, chain[n]->since,
			                            pos, chain[n]->state != from->state);
			from = chain[n];
		}
		t->pos[i] = pos;
		t->posm |= 1u << i;
		t->rule[i].at = rlt__params_pos_ns(&cur->params, pos);
		t->rule[i].ver = cur;
		moved = 1;
	}
	if (moved) {
		rlt_ns_t go = t->start;
		for (unsigned i = 0; i < rs->n[t->var]; i++)
			if ((t->mask & ~t->dry & (1u << i)) && t->rule[i].at != RLT_NS_NEVER &&
			    t->rule[i].at > go)
				go = t->rule[i].at;
		t->go = go;
	}
	return moved;
}

/* Sleeps until t->go in slices of RLT_SET_SLICE_NS, so that a set made meanwhile moves the go
 * time within a slice (a lowered rate makes the wait longer, a raised one shorter). intr: a
 * signal handler that runs ends the wait (returns 1). */
static int wait_ticket(struct rlt__ruleset *rs, struct rlt__ticket *t, int intr)
{
	uint32_t counted = rlt__charge_waiting_start(rs, t);
	/* a set reaches a process only through its page or a shared segment: without either,
	 * one sleep to the slot, not a wake-up every slice */
	rlt_ns_t slice = rs->pub || rs->nshared ? RLT_SET_SLICE_NS : RLT_NS_NEVER;
	struct rlt__intr_wait iw;
	int rc = 0;

	if (intr)
		rlt__intr_begin(&iw);
	for (;;) {
		rlt_ns_t now = rlt__now();
		if (now >= t->go)
			break;
		rlt_ns_t until = t->go - now > slice ? now + slice : t->go;
		if (intr) {
			if (rlt__intr_sleep(&iw, until) != 0) {
				rc = 1;
				break;
			}
		} else {
			rlt__sleep_until(until);
		}
		rlt__ticket_refresh(rs, t);
	}
	if (intr && rlt__intr_end(&iw))
		rc = 1;
	rlt__charge_waiting_end(rs, t, counted);
	return rc;
}

int rlt__charge_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                   uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                   uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	return rlt__charge_at_hot(rs, t, var, mask, conn_block, peer, bytes, msgs, now);
}

int rlt__ticket_wait(struct rlt__ruleset *rs, struct rlt__ticket *t, int intr)
{
	return t->go > t->start ? wait_ticket(rs, t, intr) : 0;
}

int rlt__charge_wait_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                        uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                        uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	if (rlt__charge_at_hot(rs, t, var, mask, conn_block, peer, bytes, msgs, now) != 0)
		return -1;
	if (t->go > t->start)
		wait_ticket(rs, t, 0);
	return 0;
}

int rlt__charge_wait_intr(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                          uint64_t bytes, uint64_t msgs, rlt_ns_t now)
{
	if (rlt__charge_at_hot(rs, t, var, mask, conn_block, peer, bytes, msgs, now) != 0)
		return -1;
	if (t->go > t->start && wait_ticket(rs, t, 1) != 0)
		return 1;
	return 0;
}

/* The settle of a ticket whose call did not move all it was charged, or whose units were not
 * counted at the charge (it waited); rlt__settle (charge.h) returns before it otherwise. */
void rlt__settle_rest(struct rlt__ruleset *rs, struct rlt__ticket *t, uint64_t bytes_used,
                      uint64_t msgs_used)
{
	for (uint32_t m = t->mask & ((1u << rs->n[t->var]) - 1); m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);
		struct rlt__rt_rule *r = &rs->rules[t->var][i];
		if (t->rule[i].at == RLT_NS_NEVER)
			continue;
		uint64_t took = rlt__cost_for(r->unit, t->bytes, t->msgs);
		uint64_t used = rlt__cost_for(r->unit, bytes_used, msgs_used);
		if (r->unit == RLT_UNIT_CALLS)
			used = msgs_used ? 1 : 0;
		if (used < took)
			refund(r, t->kstate[i], t->conn_block, t->rule[i].at, took - used);
		if (t->counted)
			rlt__count_units_back(rs, r, used < took ? took - used : 0);
		else
			rlt__count_units(rs, r, used < took ? used : took);
	}
}
