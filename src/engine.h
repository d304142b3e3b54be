/*
 * engine.h: what src/engine.c dispatches to. Each algorithm is one file exporting one table of
 * operations; every operation is pure (params, state, now, cost in; no clock, no sleep, no system
 * call of its own; a lock only inside the windows and the log, held for the decision alone).
 */
#ifndef RLT_ENGINE_H
#define RLT_ENGINE_H

#include <stdatomic.h>
#include <stdint.h>

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

/* engine_window.c: a fixed window's position under old laid out for np at `since` (a set that
 * changed the limit): what the current window has taken stays taken, judged against the new
 * limit, and reservations in later windows keep their last window's count. 0 or -EINVAL. */
int rlt__fw_carry(const struct rlt_params *old, void *old_state, const struct rlt_params *np,
                  void *new_state, rlt_ns_t since);

/* engine_gcra.c: the token bucket's decide, which rlt_decide calls by name: the common rule's
 * decision without the ops table's two cache lines and an indirect call. */
enum rlt_verdict rlt__token_decide(const struct rlt_params *p, void *state, rlt_ns_t now,
                                   uint64_t cost, enum rlt_mode mode, rlt_ns_t *at);

/* engine_gcra.c: the first time a call costing `cost` would go on a token or leaky bucket's
 * state, as the state stands (0: it would go at any time; nothing taken). */
rlt_ns_t rlt__gcra_go_at(const struct rlt_params *p, void *state, uint64_t cost);

/* engine.c: the retune of a rule whose states are many (one per connection, one per key) and
 * cannot all be carried: np continues old's ticks from `now`, so each state keeps its units,
 * which count at np's rate. 0, 1 (np too fast for old's ticks: it has its own, a state must be
 * carried), or -errno with err. */
int rlt__params_retune_keep(struct rlt_params *np, const struct rlt_params *old, rlt_ns_t now,
                            struct rlt_error *err);
/* engine.c: a go time as a position of p (token, leaky: its ticks; windows: the ns), back, and
 * a position under old mapped to np (made from old at `since`; carried: the state was carried
 * rather than kept). A waiting call keeps its position across sets, never a go time that a far
 * rate clamped. */
uint64_t rlt__params_pos(const struct rlt_params *p, rlt_ns_t at);
rlt_ns_t rlt__params_pos_ns(const struct rlt_params *p, uint64_t pos);
uint64_t rlt__params_remap_pos(const struct rlt_params *old, const struct rlt_params *np,
                               rlt_ns_t since, uint64_t pos, int carried);

/* engine_gcra.c: a clock reading in ticks of p, and the first ns that reaches a tick count
 * (rlt_params_retune and rlt_params_remap build on them). */
uint64_t rlt__gcra_ticks_of(const struct rlt_params *p, rlt_ns_t now);
rlt_ns_t rlt__gcra_ns_of(const struct rlt_params *p, uint64_t ticks);

#endif
