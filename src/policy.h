/*
 * policy.h: the rules in force in a process, which of them apply to a call, and the charge of a
 * call against all that apply (reserve, wait, refund, count). Shared by the preload and the
 * seccomp supervisor: neither knows an engine, both ask this.
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

/* Set (per thread) while the library itself makes network calls (the Redis client): the hooks
 * then pass every call straight through, so that the throttle never charges or re-enters
 * itself. Defined in scope_redis.c; in the freestanding build (RLT_NOLIBC, which has no TLS
 * and no Redis scope) a field of the thread block (preload/nolibc/nolibc.h, pre-included). */
#ifdef RLT_NOLIBC
#define rlt__internal (rlt_trap_self()->internal)
#else
extern _Thread_local int rlt__internal __attribute__((tls_model("initial-exec")));
#endif

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

/*
 * A forked process's rules, for the supervisor (ruleset_fork.c): a copy of rs whose
 * process-scope states stand where rs's stand now (rlt_state_copy) and whose statistics start
 * at zero, private and unpublished (the supervisor publishes it: rlt__pub_create). RLT_CONNS counts, shared and redis scopes stay common (the copy points at rs's).
 * No decision on rs may run meanwhile for the copy to be exact (the supervisor holds its
 * lock). NULL when out of memory.
 */
struct rlt__ruleset *rlt__ruleset_fork(struct rlt__ruleset *rs);
/* Adds a fork's statistics into rs's (the summary of the whole command), removes its page and
 * frees it. */
void rlt__ruleset_join(struct rlt__ruleset *rs, struct rlt__ruleset *fork);

/* What a call is made to or from, for the rule filters. */
struct rlt__peer {
	int af;           /* AF_INET, AF_INET6, AF_UNIX, other, or 0 when not known */
	uint8_t addr[16]; /* network order; an IPv4-mapped IPv6 address is kept as IPv4 */
	uint16_t port;    /* host order; 0 when not known */
};

/* Fills p from a socket address (NULL or a short length gives af 0). */
void rlt__peer_from_sockaddr(struct rlt__peer *p, const struct sockaddr *sa, socklen_t len);

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

/* Why this build cannot enforce a rule it parsed (NULL: it can); the _seccomp form: under
 * `rlthrottle --seccomp`, which the launcher checks before the supervisor starts. */
const char *rlt__rule_unsupported(const struct rlt_rule *r);
const char *rlt__rule_unsupported_seccomp(const struct rlt_rule *r);
/* ... and under the system-call front inside the program (trap_*.c): no redis:// yet. */
const char *rlt__rule_unsupported_trap(const struct rlt_rule *r);

/* The piece and the whole (rlt__piece, rlt__whole) of one bytes rule; UINT64_MAX for others. */
uint64_t rlt__piece_of(enum rlt_unit unit, const struct rlt_params *p);
uint64_t rlt__whole_of(enum rlt_unit unit, const struct rlt_params *p, uint64_t piece);
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

/* Initialises a connection block of rs->conn_block_size bytes for a new socket. */
void rlt__conn_block_init(const struct rlt__ruleset *rs, void *block);

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

/* Units a call under `mask` could take at once now (the least over the byte rules). A keyed
 * rule's are those of the key of `peer` (as for rlt__charge_wait_peer; rlt__available: NULL). */
uint64_t rlt__available(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
                        void *conn_block, rlt_ns_t now);
uint64_t rlt__available_peer(struct rlt__ruleset *rs, enum rlt_var var, uint32_t mask,
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

/* A charge taken against every rule in a mask, to be settled after the real call. */
struct rlt__ticket {
	enum rlt_var var;
	uint32_t mask;
	void *conn_block;
	uint64_t bytes, msgs;         /* what was reserved */
	rlt_ns_t at[RLT_MAX_RULES_PER_VAR];
	const struct rlt__rule_ver *ver[RLT_MAX_RULES_PER_VAR]; /* the block at[i] was decided by */
	void *kstate[RLT_MAX_RULES_PER_VAR]; /* keyed rules: the key's state charged, for the
	                                        refund of the settle */
	uint64_t pos[RLT_MAX_RULES_PER_VAR]; /* at[i] as a position of ver[i]'s params, once a
	                                        set moved it (rlt__ticket_refresh): a go time
	                                        clamped by a far rate loses its place, this not */
	uint32_t posm;                /* the rules whose pos[] holds their place */
	uint32_t dry;                 /* rules of the mask with action=dry-run: charged, never
	                                 waited for */
	rlt_ns_t start;               /* when the call asked */
	rlt_ns_t go;                  /* when it may go (the latest slot of its rules) */
	int err;                      /* errno when rejected */
	int counted;                  /* it went at once and its statistics, units included, were
	                                 counted whole by the charge: a settle of all it took has
	                                 nothing left to do */
};

/*
 * Charges a call of `bytes` bytes and `msgs` messages (a calls rule takes 1) against every rule
 * in mask: reject rules must conform now; delay rules reserve within their max-wait. Returns 0
 * (taken: wait until t->go, make the real call, then rlt__settle), or -1 with t->err set
 * (nothing taken). Never sleeps itself: the preload sleeps, the supervisor schedules. Counts
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
 * A ticket whose rules were set since it was charged: moves each at[i] to the same place in
 * its rule's queue under the params in force now, and t->go with them. 1 when something moved.
 * The preload's waits call it every RLT_SET_SLICE_NS; the supervisor when a set is applied.
 */
int rlt__ticket_refresh(struct rlt__ruleset *rs, struct rlt__ticket *t);
/* Threads waiting now (for `rlthrottle top`): _start when a charged call starts waiting for
 * t->go counts it on each rule of the ticket that makes it wait and returns those rules; _end
 * takes it off the same ones (a set meanwhile may move t->at[]). The preload's sleeps count
 * themselves (rlt__charge_wait_at); the supervisor counts its parked jobs. */
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

/*
 * RLT_CONNS (conns.c): admits one more open connection under the rules in mask (reject, or wait
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
 * The RLT_CONNS decision in one step that never sleeps, for the preload's blocking acquire and
 * the supervisor's scheduled one alike: a slot in every rule of mask, all or none. Returns 0
 * (taken), 1 (wait: w->rule is full, until a close or w->deadline, then try again with the same
 * w), or -errno (rejected: a reject rule is full, or the max-wait is over). Counts statistics
 * once the call is admitted or rejected; w starts zeroed and is zeroed again then.
 */
int rlt__conns_try(struct rlt__ruleset *rs, uint32_t mask, struct rlt__conns_wait *w,
                   rlt_ns_t now);
/* rlt__conns_try for a connection whose rules may have key= (peer as rlt__conns_acquire_peer). */
int rlt__conns_try_peer(struct rlt__ruleset *rs, uint32_t mask, const struct rlt__peer *peer,
                        struct rlt__conns_wait *w, rlt_ns_t now);
/* The RLT_CONNS rules at their limit now (bit i: rule i), as rlt__conns_try would find them
 * before taking back the slots of dead processes: for a front that learns of closes late and
 * looks for them before a call waits or is refused (the supervisor's sweep). The _peer form
 * looks at this peer's key in keyed rules. */
uint32_t rlt__conns_full(struct rlt__ruleset *rs);
uint32_t rlt__conns_full_peer(struct rlt__ruleset *rs, const struct rlt__peer *peer);
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

/* connect_attempt.c: 1 when a connect() now on fd, a stream socket that has seen one before,
 * would start a connection attempt (RLT_CONNECT and RLT_CONNS count it); 0 when it would only
 * report how the last one went (EALREADY, EISCONN, 0 or its error). Keeps errno. */
int rlt__connect_starts(int fd);

/*
 * Which rules a connect() on fd (a socket of `type`) counts, given *cmask (RLT_CONNECT) and
 * *nmask (RLT_CONNS) as matched for its peer; both are cut to what it counts. A datagram
 * socket counts nothing; one that holds its RLT_CONNS slots already takes none again; and a
 * connect() that only asks how an attempt went counts nothing (rlt__connect_starts, asked only
 * when asked_before: a front that knows this is the socket's first connect() saves the call).
 */
void rlt__connect_counts(int fd, int type, int asked_before, int holds_slots, uint32_t *cmask,
                         uint32_t *nmask);

/* connect_attempt.c: 1 when a send is a connect: TCP Fast Open (MSG_FASTOPEN in flags, an
 * address `to`) on a stream socket (`type`) that has no peer yet. Charged as a connect (and its
 * result read as a connect()'s, rlt__connect_outcome of 0 or -1), then as a send to that peer. */
int rlt__connect_by_send(int type, int flags, const struct sockaddr *to, socklen_t tolen,
                         int has_peer);

/* What a connect()'s result (rc, and errno err when rc is -1) means for its socket. */
enum rlt__connect_outcome {
	RLT_CONNECT_GOING,     /* connected, or an attempt goes on: it holds its RLT_CONNS slots */
	RLT_CONNECT_CONNECTED, /* EISCONN: connected before, nothing changed */
	RLT_CONNECT_FAILED,    /* the attempt failed and the program knows: the next connect()
	                          starts another; its slots go back */
};
enum rlt__connect_outcome rlt__connect_outcome(int rc, int err);

#endif
