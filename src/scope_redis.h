/*
 * scope_redis.h: scope=redis://HOST:PORT/NAME, one budget across machines.
 *
 * Redis holds the state (one Lua script per algorithm family, atomic, on Redis' own clock). A
 * process does not ask Redis for every call: it leases a small batch of units (10 ms of the
 * rate, at least one unit, at most the burst or the window's limit) and spends it locally with
 * one atomic decrement per call; only an empty lease costs a round trip. What a process has not
 * spent goes back to Redis at exit.
 *
 * Accuracy bound: at any time each process holds at most one lease (plus, for a call larger
 * than a lease, that call's own cost). So over any interval the calls admitted by all processes
 * together exceed what the rule alone would admit by at most the sum, over the processes, of
 * one lease each: N processes, rate R: at most N * max(10 ms of R, 1 unit, the largest call)
 * above the rule. For the windows a lease lapses at the end of the (sub-)window it was taken
 * in, so the excess does not carry into the next window. While Redis cannot answer,
 * fallback=local lets each process enforce the rule alone: up to N times the rate.
 *
 * When Redis does not answer within 50 ms (connect, or a request and its whole reply), refuses
 * AUTH, or answers what no script returns (redis_client.c refuses it), the rule's fallback decides
 * (local: a process-local engine with the same params; allow; deny) and the process asks Redis
 * again at most every 500 ms. The log says so once per outage and once when Redis is back.
 */
#ifndef RLT_SCOPE_REDIS_H
#define RLT_SCOPE_REDIS_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sys/types.h>

#include "engine_lock.h"
#include "redis_client.h" /* rlt__redis_ping, for --check */
#include "redis_scripts.h"
#include "rlthrottle.h"

struct rlt__redis;

/* Where the outage and recovery lines go (the preload sets it to its logger; NULL: nowhere).
 * level: 0 error, 1 warn, 2 info, 3 debug. */
extern void (*rlt__scope_log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets up a redis-scope rule (no connection yet: the first call that needs a lease makes it).
 * Returns 0, or -ENOMEM with err. */
int rlt__redis_new(const struct rlt_rule *r, struct rlt__redis **out, struct rlt_error *err);

/* rlt_decide for a redis-scope rule: the lease, a round trip when it is empty, or the fallback. */
enum rlt_verdict rlt__redis_decide(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                   enum rlt_mode mode, rlt_ns_t *at);
void rlt__redis_refund(struct rlt__redis *rd, rlt_ns_t at, uint64_t units);
uint64_t rlt__redis_available(struct rlt__redis *rd, rlt_ns_t now);

/* Round trips this process made to Redis for this rule (benchmarks, tests). */
uint64_t rlt__redis_round_trips(const struct rlt__redis *rd);

/* Gives back every unspent lease now (also done at exit). */
void rlt__redis_return_leases(void);

/* ----- what scope_redis.c and scope_redis_key.c (a lease per key) share ----- */

/* A lease is this much of the rate. */
#define RLT__REDIS_LEASE_NS (10 * 1000 * 1000ull)

struct klease;
struct rlt__redis {
	/* The hot path: one atomic decrement of `lease`. */
	_Atomic uint64_t lease;       /* units leased from Redis and not spent yet */
	_Atomic uint64_t lease_from;  /* local ns: leased units go no earlier (a reservation) */
	_Atomic uint64_t lease_until; /* local ns: they lapse (a window's end); RLT_NS_NEVER */
	_Atomic int down;             /* Redis did not answer: the fallback decides */
	_Atomic uint64_t retry_at;    /* while down: no new attempt before this local ns */
	_Atomic uint64_t round_trips; /* requests sent to Redis, for benchmarks and tests */
	_Atomic uint64_t deny_until;  /* local ns: Redis said no call conforms before this, so
	                                 action=reject calls are denied without asking again */

	/* The slow path, under `lock` (engine_lock.h: a signal handler that interrupted this thread's
	 * refill finds it its own and takes the rlt__redis_fallback; a fork child finds it free). */
	struct rlt__lock lock;
	struct rlt__redis_conn conn; /* conn.ctx NULL until needed, or after an error */
	pid_t pid;       /* the process that made c: a forked child makes its own */
	char sha[48];    /* the script's SHA1 once loaded on this connection */
	char ref[64];    /* the last lease's ref (window, sub-window or log member): a give-back */
	char why[160];   /* what went wrong last, for the outage line */

	/* Set at load. */
	struct rlt_rule rule;
	enum rlt__redis_family fam;
	uint64_t lease_size;
	char key[RLT_NAME_MAX + 32];
	char args[RLT__REDIS_NARGS][40]; /* the family's params, formatted once */
	int nargs;
	void *local;       /* fallback=local: a process-local state with the same params */
	struct rlt__redis *next;

	/* key=: a lease per key instead of the one above (scope_redis_key.c). */
	struct rlt__keytab *keys;       /* per key: its unspent units (a slot's `state`) */
	struct klease *kl;              /* per slot of `keys`: its lease's times */
	size_t kl_bytes;
	struct rlt__keytab *local_keys; /* fallback=local: a process-scope table, same params */
	_Atomic uint64_t gen;           /* bumped in a fork's child: each lease is the parent's */
};


/* What a round trip granted. */
struct rlt__redis_grant {
	int64_t units;
	int64_t wait_us;  /* -1: never */
	int64_t valid_us; /* -1: no lapse */
	char ref[64];
};


/* The hot path of a lease (the rule's, or a key's): cost units from `units`, with acquire (a
 * refill publishes them with release after `from`). 1 when taken, *at: when the call may go
 * (not before `from`). */
static inline int rlt__redis_lease_take(_Atomic uint64_t *units, _Atomic uint64_t *from,
                                        rlt_ns_t now, uint64_t cost, rlt_ns_t *at)
{
	uint64_t have = atomic_load_explicit(units, memory_order_relaxed);

	while (have >= cost)
		if (atomic_compare_exchange_weak_explicit(units, &have, have - cost,
		                                          memory_order_acquire,
		                                          memory_order_relaxed)) {
			rlt_ns_t f = atomic_load_explicit(from, memory_order_relaxed);
			*at = f > now ? f : now;
			return 1;
		}
	return 0;
}

/* A round trip's grant g into a lease (the rule's, or a key's): its times, then its units
 * (release: rlt__redis_lease_take's acquire sees the times). The round trip started at `now`
 * and ended at `after`: Redis' answers are relative to its clock's now, somewhere inside it, so
 * a go time from its end and a lapse from its start err on the strict side. */
static inline void rlt__redis_lease_grant(_Atomic uint64_t *units, _Atomic uint64_t *from,
                                          _Atomic uint64_t *until,
                                          const struct rlt__redis_grant *g, rlt_ns_t now,
                                          rlt_ns_t after)
{
	atomic_store_explicit(from, g->wait_us > 0 ? after + (rlt_ns_t)g->wait_us * 1000 : 0,
	                      memory_order_relaxed);
	atomic_store_explicit(until, g->valid_us < 0 ? RLT_NS_NEVER : now + (rlt_ns_t)g->valid_us * 1000,
	                      memory_order_relaxed);
	atomic_fetch_add_explicit(units, (uint64_t)g->units, memory_order_release);
}

/* One EVALSHA (reloading the script once on NOSCRIPT: Redis restarted). 0 or -1 (rd->why).
 * Under rd->lock, with rlt__internal set. */
int rlt__redis_eval(struct rlt__redis *rd, const char *key, int64_t want, uint64_t min,
                    int reserve, const char *ref, struct rlt__redis_grant *g);
/* The rule's fallback decides (Redis does not answer, or a refill could not be waited for). */
enum rlt_verdict rlt__redis_fallback(struct rlt__redis *rd, rlt_ns_t now, uint64_t cost,
                                     enum rlt_mode mode, rlt_ns_t *at);
/* A round trip failed at `now` (the outage's line, once), or answered (the line it is back). */
void rlt__redis_went_down(struct rlt__redis *rd, rlt_ns_t now);
void rlt__redis_came_back(struct rlt__redis *rd);
/* rd->lock, 0 when held. Held by this very thread (a signal handler interrupted its refill) it
 * is not waited for at all: the caller takes the fallback. */
int rlt__redis_lock_bounded(struct rlt__redis *rd, rlt_ns_t now);

/* A refill in progress on this thread: a call nested in it (a signal handler's) takes the
 * fallback rather than a second round trip. */
#ifdef RLT_NOLIBC /* no TLS: the thread block, which a nested call inherits (trap_stack.c) */
#define rlt__redis_refilling (rlt_trap_self()->refilling)
#else
extern _Thread_local int rlt__redis_refilling __attribute__((tls_model("initial-exec")));
#endif

#endif
