/*
 * ruleset_fork.h: a forked process's rules, for the supervisor: its budgets copied from its
 * parent's, its statistics joined back.
 */
#ifndef RLT_RULESET_FORK_H
#define RLT_RULESET_FORK_H

#include "policy.h"

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

#endif
