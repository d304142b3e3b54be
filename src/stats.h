/* stats.h: the RLT_STATS JSON summary (rlthrottle(7) STATISTICS). */
#ifndef RLT_STATS_H
#define RLT_STATS_H

#include <sys/types.h>

#include "policy.h"

/* The schema of the RLT_STATS summary, `top --json` and `stats --format json` (rlthrottle(7) STATISTICS): one
 * set of field names, rules numbered from 1. A new number when a field changes meaning or
 * goes; added fields keep it. */
#define RLT_STATS_SCHEMA 2 /* 2: a process no longer says "supervised" */

/* Writes the summary to fd with wr (the real write: the preload must not re-enter its own
 * hook). Async-signal-safe (no stdio, no allocation), so that it can run from a fatal-signal
 * handler. Returns 0 or -errno. */
int rlt__stats_write(struct rlt__ruleset *rs, ssize_t (*wr)(int, const void *, size_t), int fd,
                     pid_t pid, rlt_ns_t elapsed_ns);

/* Writes the summary where an RLT_STATS template says ("stderr", or a path with %p), with the
 * given real write and close. Returns 0, or -errno with err saying what failed. */
int rlt__stats_to(const char *tmpl, struct rlt__ruleset *rs,
                  ssize_t (*wr)(int, const void *, size_t), int (*cl)(int), pid_t pid,
                  rlt_ns_t elapsed_ns, struct rlt_error *err);

/* Expands %p in a path template to the pid ("%%" is a '%'). Returns 0, or -ENAMETOOLONG. */
int rlt__stats_path(const char *tmpl, pid_t pid, char *out, size_t len);

#endif
