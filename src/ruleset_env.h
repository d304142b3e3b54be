/*
 * ruleset_env.h: a process's rules from its environment, as both fronts load them: the settings
 * (RLT_STATS), the variables, the rules RLT_ON_ERROR=ignore leaves out, the rules in force and
 * the scopes' own lines (a Redis outage) all told through one log sink, so that a front cannot
 * forget a line the other writes.
 */
#ifndef RLT_RULESET_ENV_H
#define RLT_RULESET_ENV_H

#include "policy.h"
#include "settings.h"

/* Where the core's lines go: level is an rlt__loglevel; the sink drops what RLT_LOG does not
 * ask for and adds the "rlthrottle[PID]: " of its front. */
typedef void (*rlt__log_fn)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Builds rs from the RLT_* rule variables under the settings already read (set): statistics
 * counted when RLT_STATS is set, a bad rule left out with a warning through log under
 * RLT_ON_ERROR=ignore, and log made the sink of the scopes' lines (rlt__scope_log) for the
 * life of the process. Returns 0, or -1 with err (the line the front prints before it stops).
 * Load time only (getenv).
 */
int rlt__ruleset_from_env(struct rlt__ruleset *rs, const struct rlt__settings *set,
                          rlt__log_fn log, struct rlt_error *err);

/* Logs every rule in force in canonical form at RLT_LOG=info ("RLT_SEND: ..."), with `tail`
 * after each ("" for none). */
void rlt__ruleset_log(const struct rlt__ruleset *rs, rlt__log_fn log, const char *tail);

#endif
