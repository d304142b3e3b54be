/*
 * charge.h: the charge of a call against every rule that applies to it: reserve, wait, refund,
 * settle, count. The hooks call it under both fronts, and wait where it says.
 */
#ifndef RLT_CHARGE_H
#define RLT_CHARGE_H

#include <stdint.h>

#include "policy.h"

/* Units a call under `mask` could take at once now (the least over the byte rules). A keyed
 * rule's are those of the key of `peer` (as for rlt__charge_wait_peer; rlt__available: NULL). */
uint64_t rlt__available(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                        void *conn_block, rlt_ns_t now);
uint64_t rlt__available_peer(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                             void *conn_block, const struct rlt__peer *peer, rlt_ns_t now);
/* The engine state a call of rule r (block v) decides on: NULL for a keyed rule (its key's),
 * a redis rule's lease, or a connection-scope rule of a socket with no block. */
void *rlt__rule_state(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                      void *conn_block);
/* ... of one rule (its block v, loaded by the caller): UINT64_MAX when it has no state here. */
uint64_t rlt__available_rule(const struct rlt__rt_rule *r, const struct rlt__rule_ver *v,
                             void *conn_block, const struct rlt__peer *peer, rlt_ns_t now);

/*
 * Asks for the lines a charge under `mask` of var will read of its rules (the rule's first
 * line and its block v0: a rule not set since it was built) and of the ruleset, without
 * waiting for them. A front calls it before it reads the clock: the clock read waits for
 * every load before it (rdtscp), and after a system call these lines are mostly out of the
 * nearest cache, so their misses then overlap the clock read and each other rather than come
 * one after another.
 */
static inline void rlt__charge_prefetch(const struct rlt__ruleset *rs, enum rlt_var var,
                                        uint32_t mask)
{
	__builtin_prefetch(&rs->n[var]);
	for (; mask; mask &= mask - 1) {
		const struct rlt__rt_rule *r = &rs->rules[var][__builtin_ctz(mask)];
		__builtin_prefetch(r);
		__builtin_prefetch((const char *)&r->v0);
		__builtin_prefetch((const char *)&r->v0 + 64);
		__builtin_prefetch((const char *)&r->v0 + 128);
	}
}

/* A charge taken against every rule in a mask, to be settled after the real call. What a
 * conforming call writes of it comes first, its rule's slot next to it: after a system call
 * few of the hook's lines are left in the nearest cache, the stack's included. */
struct rlt__ticket {
	enum rlt_var var;
	uint32_t mask;
	void *conn_block;
	uint64_t bytes, msgs;         /* what was reserved */
	rlt_ns_t start;               /* when the call asked */
	rlt_ns_t go;                  /* when it may go (the latest slot of its rules) */
	int err;                      /* errno when rejected */
	int counted;                  /* it went at once and its statistics, units included, were
	                                 counted whole by the charge: a settle of all it took has
	                                 nothing left to do */
	uint32_t posm;                /* the rules whose pos[] holds their place */
	uint32_t dry;                 /* rules of the mask with action=dry-run: charged, never
	                                 waited for */
	struct {
		rlt_ns_t at;                    /* the rule's slot (RLT_NS_NEVER: not applied) */
		const struct rlt__rule_ver *ver; /* the block `at` was decided by */
	} rule[RLT_MAX_RULES_PER_VAR];
	void *kstate[RLT_MAX_RULES_PER_VAR]; /* keyed rules: the key's state charged, for the
	                                        refund of the settle */
	uint64_t pos[RLT_MAX_RULES_PER_VAR]; /* rule[i].at as a position of rule[i].ver's params,
	                                        once a set moved it (rlt__ticket_refresh): a go
	                                        time clamped by a far rate loses its place, this
	                                        not */
};

/*
 * Charges a call of `bytes` bytes and `msgs` messages (a calls rule takes 1) against every rule
 * in mask: reject rules must conform now; delay rules reserve within their max-wait. Returns 0
 * (taken: wait until t->go, make the real call, then rlt__settle), or -1 with t->err set
 * (nothing taken). Never sleeps itself: the caller waits (rlt__charge_wait_at). Counts
 * statistics.
 */
int rlt__charge(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs);
/* rlt__charge for a call whose rules may have key=: `peer` as for rlt__charge_wait_peer. */
int rlt__charge_peer(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                     uint64_t bytes, uint64_t msgs);

/* rlt__charge_wait for a call whose rules may have key= (rlthrottle(7) RULES): `peer` is what the key is
 * made of, its address the remote one and its port the one key=port takes (the remote port; for
 * accept, the local, listening one; for send and receive, the remote address of the socket or
 * of the datagram). NULL: no address known (such calls share one key). rlt__charge and
 * rlt__charge_wait pass NULL. */
int rlt__charge_wait_peer(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                          uint64_t bytes, uint64_t msgs);

/* rlt__charge, then sleep until the call may go. The _at form takes the clock reading the
 * caller already made (one clock read per call on the hot path, not two), and the peer of a
 * send or receive (as for rlt__charge_wait_peer). */
int rlt__charge_wait(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                     uint32_t mask, void *conn_block, uint64_t bytes, uint64_t msgs);
int rlt__charge_wait_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                        uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                        uint64_t bytes, uint64_t msgs, rlt_ns_t now);
/* rlt__charge_wait_at, but a signal handler that runs during the wait ends it: returns 1 then,
 * the charge taken (settle it as for a call that moved what it moved, 0 if nothing). */
int rlt__charge_wait_intr(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                          uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                          uint64_t bytes, uint64_t msgs, rlt_ns_t now);

/* rlt__charge_wait_at in its two steps, for a front that must do something between them
 * only when the call waits (the preload's paced call holds its socket: io_pacing.c): the
 * charge (rlt__charge with the caller's clock reading and peer), then the wait until t->go
 * (none when the call may go now; intr as rlt__charge_wait_intr: 1 when a handler ended it). */
int rlt__charge_at(struct rlt__ruleset *rs, struct rlt__ticket *t, enum rlt_var var,
                   uint32_t mask, void *conn_block, const struct rlt__peer *peer,
                   uint64_t bytes, uint64_t msgs, rlt_ns_t now);
int rlt__ticket_wait(struct rlt__ruleset *rs, struct rlt__ticket *t, int intr);

/* How long a delayed call sleeps at most before it looks for a set that moved its go time. */
#define RLT_SET_SLICE_NS (5 * 1000 * 1000ull)
/* The most sets a waiting ticket follows back (older ones: the wait keeps its time). */
#define RLT_SET_CHAIN_MAX 64
/*
 * A ticket whose rules were set since it was charged: moves each rule[i].at to the same place in
 * its rule's queue under the params in force now, and t->go with them. 1 when something moved.
 * The waits call it every RLT_SET_SLICE_NS.
 */
int rlt__ticket_refresh(struct rlt__ruleset *rs, struct rlt__ticket *t);
/* Threads waiting now (for `rlthrottle top`): _start when a charged call starts waiting for
 * t->go counts it on each rule of the ticket that makes it wait and returns those rules; _end
 * takes it off the same ones (a set meanwhile may move t->rule[].at). (rlt__charge_wait_at's). */
uint32_t rlt__charge_waiting_start(struct rlt__ruleset *rs, const struct rlt__ticket *t);
void rlt__charge_waiting_end(struct rlt__ruleset *rs, const struct rlt__ticket *t, uint32_t m);

/* After the real call: gives back what it did not use (bytes_used <= t->bytes, msgs_used <=
 * t->msgs) and counts the units. A call that went at once and moved all it was charged was
 * counted by its charge (t->counted): nothing is left to do, and nothing is done. */
void rlt__settle_rest(struct rlt__ruleset *rs, struct rlt__ticket *t, uint64_t bytes_used,
                      uint64_t msgs_used);
static inline void rlt__settle(struct rlt__ruleset *rs, struct rlt__ticket *t,
                               uint64_t bytes_used, uint64_t msgs_used)
{
	if (__builtin_expect(t->counted && bytes_used == t->bytes && msgs_used == t->msgs, 1))
		return;
	rlt__settle_rest(rs, t, bytes_used, msgs_used);
}

#endif
