/*
 * engine.h: what src/engine.c dispatches to. Each algorithm is one file exporting one table of
 * operations; every operation is pure (params, state, now, cost in; no clock, no sleep, no system
 * call of its own; a lock only inside the windows and the log, held for the decision alone).
 */
#ifndef RLT_ENGINE_H
#define RLT_ENGINE_H

#include <pthread.h>

#include "rlthrottle.h"

struct rlt__engine_ops {
	size_t (*state_size)(const struct rlt_params *p);
	int (*init)(const struct rlt_params *p, void *state, unsigned flags);
	void (*destroy)(const struct rlt_params *p, void *state);
	int (*copy)(const struct rlt_params *p, void *dst, void *src);
	enum rlt_verdict (*decide)(const struct rlt_params *p, void *state, rlt_ns_t now,
	                           uint64_t cost, enum rlt_mode mode, rlt_ns_t *at);
	void (*refund)(const struct rlt_params *p, void *state, rlt_ns_t at, uint64_t units);
	uint64_t (*available)(const struct rlt_params *p, void *state, rlt_ns_t now);
};

extern const struct rlt__engine_ops rlt__engine_token;          /* engine_gcra.c */
extern const struct rlt__engine_ops rlt__engine_leaky;          /* engine_gcra.c */
extern const struct rlt__engine_ops rlt__engine_fixed_window;   /* engine_window.c */
extern const struct rlt__engine_ops rlt__engine_sliding_window; /* engine_window.c */
extern const struct rlt__engine_ops rlt__engine_sliding_log;    /* engine_log.c */

/* engine_lock.c: 0 or -errno; the lock returns 0 when held, *owner_died when the previous
 * holder died with it (the caller repairs what it must before going on). */
int rlt__engine_lock_init(pthread_mutex_t *m, unsigned flags);
int rlt__engine_lock(pthread_mutex_t *m, int *owner_died);

#endif
