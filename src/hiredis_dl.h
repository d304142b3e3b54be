/*
 * hiredis_dl.h: hiredis, loaded only when a rule names a redis:// scope. librlthrottle.so
 * links against nothing but the C library, so that preloading it into any program adds no
 * dependency that program did not have; the Redis client comes in with dlopen at load time.
 * Only its connect is used: redis_client.c writes requests and reads replies itself, bounded.
 */
#ifndef RLT_HIREDIS_DL_H
#define RLT_HIREDIS_DL_H

#include <sys/time.h>

#include <hiredis/hiredis.h> /* types only: nothing here links against it */

#include "rlthrottle.h"

struct rlt__hiredis {
	redisContext *(*connect_with_timeout)(const char *ip, int port, const struct timeval tv);
	int (*set_timeout)(redisContext *c, const struct timeval tv);
	void (*free_context)(redisContext *c);
};

extern struct rlt__hiredis rlt__hr;

/* Loads the library once (thread-safe). Returns 0, or -ENOENT with err saying what is missing. */
int rlt__hiredis_load(struct rlt_error *err);

#endif
