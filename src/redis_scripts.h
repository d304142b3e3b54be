/*
 * redis_scripts.h: the Lua scripts a redis:// scope leases from, one per algorithm family,
 * each the Redis-side twin of a C engine (see redis_scripts.c for where the two must agree).
 *
 * Every script takes the same arguments and gives the same answer, so that the lease scheme
 * (scope_redis.c) does not care which algorithm it leases from:
 *   KEYS[1]  the rule's key, "rlthrottle:{NAME}:<family>"
 *   ARGV[1]  want: units asked for (a lease); negative: give -want units back
 *   ARGV[2]  min: the fewest units worth having (the call's own cost, less what is leased)
 *   ARGV[3]  1: reserve (action=delay: a later slot within max-wait is fine), 0: now or nothing
 *   ARGV[4]  max-wait in us, -1 for none
 *   ARGV[5]  on a give-back, the lease it belongs to (the ref the grant returned)
 *   ARGV[6..] the family's params (rlt__redis_script_args)
 * and answer {granted, wait_us, valid_us, ref}: granted 0 is a denial and wait_us then says
 * when min would conform (-1: never); valid_us -1 means the units do not lapse. Time is Redis'
 * TIME in microseconds (doubles hold it exactly for centuries), never a client's clock.
 */
#ifndef RLT_REDIS_SCRIPTS_H
#define RLT_REDIS_SCRIPTS_H

#include "rlthrottle.h"

enum rlt__redis_family {
	RLT__REDIS_GCRA,    /* token and leaky bucket: engine_gcra.c */
	RLT__REDIS_FIXED,   /* fixed window: engine_window.c */
	RLT__REDIS_SLIDING, /* sliding window: engine_window.c */
	RLT__REDIS_LOG,     /* sliding log: engine_log.c */
};

#define RLT__REDIS_NARGS 3 /* the most params a family takes (ARGV[6..8]) */

/* The family's name (the last part of its key) and its script. */
extern const char *const rlt__redis_family_name[];
extern const char *const rlt__redis_script[];

/* The family a rule's algorithm leases from, and its params (ARGV[6..]) formatted into args:
 * returns how many. */
int rlt__redis_script_args(const struct rlt_params *p, enum rlt__redis_family *fam,
                           char args[RLT__REDIS_NARGS][40]);

#endif
