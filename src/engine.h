/*
 * engine.h: what src/engine.c dispatches to. Each algorithm is one file exporting one table of
 * operations; every operation is pure (params, state, now, cost in; no clock, no sleep, no system
 * call of its own; a lock only inside the windows and the log, held for the decision alone).
 */
#ifndef RLT_ENGINE_H
#define RLT_ENGINE_H

#include "rlthrottle.h"

struct rlt__engine_ops {
	size_t (*state_size)(const struct rlt_params *p);
	int (*init)(const struct rlt_params *p, void *state, unsigned flags);
	void (*destroy)(const struct rlt_params *p, void *state);
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

#endif
