/*
 * shm_set.h: `rlthrottle set shared:NAME RULE` (rlthrottle(1) COMMANDS). A shared scope's
 * segment holds the rule in force since a set (scope_shm.h: set_gen and what follows it);
 * every process naming the scope follows at its next call, and its waiters within a slice
 * (RLT_SET_SLICE_NS).
 */
#ifndef RLT_SHM_SET_H
#define RLT_SHM_SET_H

#include "policy.h"

/* Follows the sets made on the segments of rs's shared rules since it last looked. */
void rlt__shm_follow_all(struct rlt__ruleset *rs);

/*
 * `set shared:NAME RULE`: replaces the rule of segment NAME (only its owner, or root; a segment
 * of another user or writable by others is refused). The same checks as in a process; every
 * process naming the scope follows at its next call. 0 (err: what is in force now) or a
 * negative errno with err saying why in one line.
 */
int rlt__shm_set(const char *name, const char *text, rlt_ns_t now, struct rlt_error *err);

#endif
