/*
 * scope_redis_key.h: scope=redis:// with key=, a lease per key value (scope_redis.h for the
 * lease scheme of a rule).
 */
#ifndef RLT_SCOPE_REDIS_KEY_H
#define RLT_SCOPE_REDIS_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "rlthrottle.h"

struct rlt__redis;
/*
 * key=: a lease per key value (scope_redis_key.c: the Redis record of each, what an
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

#endif
