/*
 * policy.h: the rules in force in a process and which of them apply to a call. The hooks ask
 * this, under the preload and in the --seccomp handler alike; they know no engine. The charge of a
 * call against the rules that apply is charge.h; RLT_CONNS conns.h; what a connect() counts
 * connect_attempt.h.
 */
#ifndef RLT_POLICY_H
#define RLT_POLICY_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rlthrottle.h"

/* Per-rule counters for RLT_STATS and the published page (publish.h). Relaxed atomics, 64-bit
 * and aligned (a reader in another process never sees half of one): counted only when stats
 * are on. */
struct rlt__stats {
	_Atomic uint64_t calls;    /* calls the rule applied to */
	_Atomic uint64_t allowed;  /* went ahead (at once or after a delay) */
	_Atomic uint64_t delayed;  /* went ahead after waiting */
	_Atomic uint64_t rejected; /* failed by this rule */
	_Atomic uint64_t units;    /* bytes, messages or calls charged, after refunds */
	_Atomic uint64_t delay_ns_total;
	_Atomic uint64_t delay_ns_max;
	_Atomic uint64_t waiting;  /* threads waiting for this rule now */
	_Atomic uint64_t keys_tracked; /* key=: keys in the rule's table now (keytab.h) */
	_Atomic uint64_t keys_evicted; /* key=: keys replaced whose budget was not full again */
	/* action=dry-run: what delay and reject would have done, never in the fields above
	 * (rlthrottle(7) STATISTICS); a rule `set` from dry-run to delay keeps both apart */
	_Atomic uint64_t would_delay;          /* calls delay would have made wait */
	_Atomic uint64_t would_delay_ns_total; /* and how long, in all */
	_Atomic uint64_t would_delay_ns_max;
	_Atomic uint64_t would_reject;         /* calls reject would have failed */
};

/* Raises a maximum counter to v (relaxed: a statistic). */
static inline void rlt__stat_max(_Atomic uint64_t *m, uint64_t v)
{
	uint64_t old = atomic_load_explicit(m, memory_order_relaxed);
	while (v > old &&
	       !atomic_compare_exchange_weak_explicit(m, &old, v, memory_order_relaxed,
	                                              memory_order_relaxed))
		;
}

struct rlt__shm_holder;
struct rlt__shm_hdr;
struct rlt__pub;
struct rlt__keytab;

/*
 * What a call reads of a rule, in one block that `rlthrottle set` replaces whole (rule_set.c):
 * a decision loads the rule's `cur` once and sees the old block or the new one, never half of
 * each. A block is never changed nor freed once published (a thread may still read the one it
 * loaded): a set makes a new one (rule_set.c).
 */
struct rlt__rule_ver {
	struct rlt_params params; /* the engine's */
	void *state;              /* process and shared scope: the state params count in */
	enum rlt_action action;
	int err;                  /* errno of a rejected call */
	uint64_t piece;           /* bytes rules: the most one real call moves at once */
	uint64_t whole;           /* bytes rules: the largest blocking stream send made as one call */
	rlt_ns_t since;           /* when it replaced `prev` (0: the rule's first) */
	const struct rlt__rule_ver *prev;
};

/* A key's dry-run figures, beside its keytab slot: reset when the slot holds another key
 * (its sequence moved). Statistics: relaxed. */
struct rlt__keydry {
	_Atomic uint64_t seq;     /* the slot's sequence these figures are for */
	_Atomic uint64_t lag;     /* as rlt__rt_rule.dry_lag, for this key */
	_Atomic uint64_t wait_ns; /* what delay would have made this key's calls wait, in all */
	_Atomic uint64_t refused; /* calls of this key reject would have refused */
};

struct rlt__rt_rule {
	/* What a conforming call reads of the rule, together at its start (one cache line; after
	 * a system call the hook finds few of its lines in the nearest cache, and each costs). */
	_Atomic(const struct rlt__rule_ver *) cur; /* what a call uses now (`v0` until a set) */
	struct rlt__keytab *keytab; /* key=, process scope: one state per key (keytab.h); state
	                               is NULL then. With `redis`: each key's lease (scope_redis.c) */
	struct rlt__redis *redis; /* scope=redis://: decides through its lease (scope_redis.c) */
	/* Where this rule counts: its record in the process's published page (publish.c), or
	 * `own` when the process has no page (none could be made, RLT_PUBLISH=0, or a copy not
	 * yet published). Never NULL once the rule is built. */
	struct rlt__stats *st;
	enum rlt_unit unit;   /* rule.unit (a set never changes it) */
	size_t conn_off;      /* connection scope: where the state sits in a connection block */
	_Alignas(64) struct rlt__rule_ver v0;
	struct rlt_rule rule; /* as built; after a set, rule.params, action, err, text and the rate
	                         follow for readers off the hot path (stats, publishing) */
	struct rlt__shm_hdr *shm; /* scope=shared: the segment (a set there is followed) */
	_Atomic uint32_t shm_seen; /* ... the segment's set_gen this rule follows (read by every
	                              call, written by the one applying: relaxed) */
	_Atomic uint32_t open; /* RLT_CONNS: connections open now (a futex word) */
	_Atomic uint32_t *shared_open; /* RLT_CONNS, scope=shared: the counter in the segment
	                                  (a process-shared futex word); NULL: `open` */
	struct rlt__shm_holder *holders; /* RLT_CONNS, scope=shared: who holds its slots */
	_Atomic(struct rlt__shm_holder *) mine; /* ... and this process's entry (NULL: none yet) */
	_Atomic uint64_t dry_lag; /* action=dry-run: how far the last call's slot was ahead of
	                             its clock (ns), to count each call's part of the delay */
	struct rlt__keydry *keydry; /* action=dry-run with key=: the same per key, and what delay
	                               and reject would have done to each (one per keytab slot) */
	struct rlt__stats own;
};

/* The block a call uses now. Acquire: a block is filled before it is published. */
static inline const struct rlt__rule_ver *rlt__ver(const struct rlt__rt_rule *r)
{
	return atomic_load_explicit(&r->cur, memory_order_acquire);
}

struct rlt__ruleset {
	struct rlt__rt_rule rules[RLT_VAR_COUNT][RLT_MAX_RULES_PER_VAR];
	unsigned n[RLT_VAR_COUNT];
	size_t conn_block_size; /* bytes of connection-scope state per socket (0: none) */
	int stats_on;           /* count per-rule statistics */
	struct rlt__pub *pub;   /* the published page (publish.h), NULL when none */
	unsigned nshared;       /* rules of scope=shared other than RLT_CONNS: a call checks their
	                           segments for a set (rule_set.c follows it) */
	struct rlt__rt_rule *shared[RLT_VAR_COUNT * RLT_MAX_RULES_PER_VAR];
	_Atomic uint32_t ctl_seen; /* the last request sequence of pub's control area answered
	                              (read by every call at the tick, written by the one applying) */
	_Atomic uint32_t applying; /* a thread is applying a set (the others go on) */
	unsigned vars_in_use;      /* bit 1 << v: n[v] != 0 (set by the build) */
	unsigned nkeyed;           /* rules with a keytab: their busiest keys go to the page */
	_Atomic uint64_t keys_next; /* when the page's busiest keys are next refreshed (ns) */
	int conns_shared;          /* some RLT_CONNS rule has scope=shared:NAME */
	char command[65];          /* the command whose budgets a rule with no scope= shares
	                              (scope_command.h), "" for none: set before the build */
};

/* What a call is made to or from, for the rule filters. */
struct rlt__peer {
	int af;           /* AF_INET, AF_INET6, AF_UNIX, other, or 0 when not known */
	uint8_t addr[16]; /* network order; an IPv4-mapped IPv6 address is kept as IPv4 */
	uint16_t port;    /* host order; 0 when not known */
};

/* Fills p from a socket address (NULL or a short length gives af 0). */
void rlt__peer_from_sockaddr(struct rlt__peer *p, const struct sockaddr *sa, socklen_t len);

/* 1 when the first bits bits of address a are those of net (both in network order). */
int rlt__prefix_match(const uint8_t *a, const uint8_t *net, unsigned bits);

/* A variable read one rule at a time (RLT_ON_ERROR=ignore leaves a bad rule out alone): copies
 * the next rule of *p that is not blank into one, cut at RLT_VALUE_MAX, and moves *p past it.
 * 0 when none is left. */
int rlt__rule_next(const char **p, char one[RLT_VALUE_MAX + 1]);

/*
 * Builds the ruleset from each variable's value (values[v] NULL or "" when unset). Each bad rule
 * is an error: with ignore_bad, it is left out and its message goes to warn(msg, ctx); without,
 * the first error is returned in err. Rules this build cannot enforce (rlt__rule_unsupported)
 * are refused here with a clear message. Allocates engine states, maps shared-scope segments
 * (rlt__shm_attach) and sets up redis-scope leases, connecting on first use (this is load
 * time, not a hook).
 */
int rlt__ruleset_build(struct rlt__ruleset *rs, const char *const values[RLT_VAR_COUNT],
                       int ignore_bad, void (*warn)(const char *msg, void *ctx), void *ctx,
                       struct rlt_error *err);

/* In a forked child (one thread): the keyed tables' insert locks that the parent's other
 * threads held are let go (rlt__keytab_forked). */
void rlt__ruleset_keys_forked(struct rlt__ruleset *rs);

/* Why this build cannot enforce a rule it parsed (NULL: it can). */
const char *rlt__rule_unsupported(const struct rlt_rule *r);
/* ... and under the system-call front inside the program (trap_*.c): no redis:// yet. */
const char *rlt__rule_unsupported_trap(const struct rlt_rule *r);

/* Zeroed private anonymous memory (an engine state, a rule block). NULL when out of memory. */
void *rlt__map_anon(size_t size);

/* Bitmask of the rules of `var` whose filters admit this peer on a socket of family `af`. */
uint32_t rlt__match(const struct rlt__ruleset *rs, enum rlt_var var, const struct rlt__peer *peer);

/* rlt__match for a socket of family af: a peer not known yet (af 0) stands as the family alone,
 * so that a variable whose rules all exclude the family leaves the socket unthrottled. */
uint32_t rlt__match_on(const struct rlt__ruleset *rs, enum rlt_var var,
                       const struct rlt__peer *peer, int af);
/* rlt__match_on for every variable: the rules that can apply to a socket's calls. */
void rlt__match_socket(const struct rlt__ruleset *rs, const struct rlt__peer *peer, int af,
                       uint32_t mask[RLT_VAR_COUNT]);
/* The RLT_ACCEPT rules of a connection accepted from `remote`: they filter on the remote
 * address but on the local, listening port. */
uint32_t rlt__match_accept(const struct rlt__ruleset *rs, const struct rlt__peer *remote,
                           uint16_t local_port);
/* The RLT_ACCEPT rules every connection of a listener (family af, port local_port) meets,
 * whoever it comes from: no peer= filter, no key=peer. Those a listener can ask before it
 * takes a connection (a non-blocking accept, a wait on the listener). */
uint32_t rlt__match_accept_sure(const struct rlt__ruleset *rs, int af, uint16_t local_port);
/* 1 when an accept rule depends on who connects (peer=, key=peer): it can only be asked once
 * the connection is taken. */
int rlt__accept_by_client(const struct rlt__ruleset *rs);

/* Initialises a connection block of rs->conn_block_size bytes for a new socket. */
void rlt__conn_block_init(const struct rlt__ruleset *rs, void *block);

#endif
