/*
 * conns.h: RLT_CONNS, the connections open at once under a rule: the decision in steps that
 * never sleep, the preload's blocking acquire on it, release; holders of a shared count.
 */
#ifndef RLT_CONNS_H
#define RLT_CONNS_H

#include <stdint.h>

#include "policy.h"

/*
 * RLT_CONNS: admits one more open connection under the rules in mask (reject, or wait
 * for a close within max-wait). Returns 0, or -1 with *err set. rlt__conns_release undoes it.
 */
int rlt__conns_acquire(struct rlt__ruleset *rs, uint32_t mask, int *err);
void rlt__conns_release(struct rlt__ruleset *rs, uint32_t mask);
/* The same for a connection whose rules may have key= (rlthrottle(7) RULES: at most N open per key):
 * `peer` as for rlt__charge_wait_peer, the same at the release as at the acquire. */
int rlt__conns_acquire_peer(struct rlt__ruleset *rs, uint32_t mask, const struct rlt__peer *peer,
                            int *err);
void rlt__conns_release_peer(struct rlt__ruleset *rs, uint32_t mask,
                             const struct rlt__peer *peer);

/* Where a call that must wait for an RLT_CONNS slot stands, between rlt__conns_try steps. */
struct rlt__conns_wait {
	int waiting;       /* a rule was found full: since is set */
	rlt_ns_t since;    /* when it was first found full (the delay, the max-wait count from it) */
	unsigned rule;     /* after a wait answer: the full rule, whose count to wait on */
	rlt_ns_t deadline; /* ... and when its max-wait ends (RLT_NS_NEVER: wait for a close) */
};

/*
 * The RLT_CONNS decision in one step that never sleeps, under the blocking acquire: a slot in
 * every rule of mask, all or none. Returns 0
 * (taken), 1 (wait: w->rule is full, until a close or w->deadline, then try again with the same
 * w), or -errno (rejected: a reject rule is full, or the max-wait is over). Counts statistics
 * once the call is admitted or rejected; w starts zeroed and is zeroed again then.
 */
int rlt__conns_try(struct rlt__ruleset *rs, uint32_t mask, struct rlt__conns_wait *w,
                   rlt_ns_t now);
/* One slot of one rule, without waiting: 1 taken, 0 the limit is reached (after taking back
 * the slots of dead processes, in shared scope). rlt__conns_release_rule gives one back and
 * wakes waiters. */
int rlt__conns_take(struct rlt__rt_rule *r);
void rlt__conns_release_rule(struct rlt__rt_rule *r);
/* Rule r's connections open now (its count: process memory, or the shared segment). */
uint32_t rlt__conns_open(struct rlt__rt_rule *r);
/* Who this process is to the shared holders (its pid and start time): read at load, and again
 * in a forked child, before anything else. */
void rlt__conns_identity(void);
/* In a forked child (after rlt__conns_identity): it holds inherited[i] connections of RLT_CONNS
 * rule i that its parent took; in shared scope they are counted again, as the child's, so that
 * each process gives back what it holds (in process scope the child's copy already has them). */
void rlt__conns_forked(struct rlt__ruleset *rs, const uint32_t inherited[RLT_MAX_RULES_PER_VAR]);

#endif
