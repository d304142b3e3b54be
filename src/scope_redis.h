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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "redis_client.h" /* rlt__redis_ping, for --check */
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

/*
 * key=: a lease per key value (scope_redis.c, "keyed leases": the Redis record of each, what an
 * eviction costs, the fallback per key). rlt__redis_keyed gives the rule its table t (made by
 * the caller with no params; its slots' state becomes each key's unspent units); load time.
 * Returns 0, or -ENOMEM with err.
 */
struct rlt__key;
struct rlt__keytab;
int rlt__redis_keyed(struct rlt__redis *rd, struct rlt__keytab *t, struct rlt_error *err);
/* rlt_decide for key k. *kstate: what to give to rlt__redis_refund_key (NULL: nothing). */
enum rlt_verdict rlt__redis_decide_key(struct rlt__redis *rd, const struct rlt__key *k,
                                       rlt_ns_t now, uint64_t cost, enum rlt_mode mode,
                                       rlt_ns_t *at, void **kstate);
void rlt__redis_refund_key(struct rlt__redis *rd, void *kstate, rlt_ns_t at, uint64_t units);
/* The Redis key of key value k under the rule's key base: "BASE:k:VALUE", VALUE as printed
 * (127.0.0.2, 10.1.2.0/24, 2001:db8::/64, port:8080; none: no address). Returns snprintf's. */
int rlt__redis_key_name(const char *base, const struct rlt__key *k, unsigned prefix4,
                        unsigned prefix6, char *buf, size_t len);

/* Round trips this process made to Redis for this rule (benchmarks, tests). */
uint64_t rlt__redis_round_trips(const struct rlt__redis *rd);

/* Gives back every unspent lease now (also done at exit). */
void rlt__redis_return_leases(void);

#endif
