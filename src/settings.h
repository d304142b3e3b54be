/*
 * settings.h: the variables other than the rules (RLT_LOG, RLT_ON_ERROR, RLT_INHERIT,
 * RLT_STATS, RLT_PUBLISH), read the same way by the preload and the --seccomp handler, and the
 * one format of a log line.
 */
#ifndef RLT_SETTINGS_H
#define RLT_SETTINGS_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "rlthrottle.h"

enum rlt__loglevel { RLT_LOG_ERROR = 0, RLT_LOG_WARN, RLT_LOG_INFO, RLT_LOG_DEBUG };

#define RLT_STATS_PATH_MAX 1024

struct rlt__settings {
	int loglevel;                        /* RLT_LOG, default warn */
	int ignore_bad;                      /* RLT_ON_ERROR=ignore */
	int inherit;                         /* RLT_INHERIT, default 1 */
	int publish;                         /* RLT_PUBLISH, default 1: the page of rlthrottle(1) COMMANDS */
	char stats[RLT_STATS_PATH_MAX];      /* RLT_STATS template, "" when off */
	char command[65];                    /* RLT_COMMAND_SCOPE: the launcher's name of the
	                                        command (scope_command.h), "" when none */
};

/* Reads the variables from the environment. Returns 0, or -EINVAL with err naming the
 * variable and the wrong value. Load time only (getenv). */
int rlt__settings_read(struct rlt__settings *st, struct rlt_error *err);

/* Formats "rlthrottle[PID]: MESSAGE\n" into line (cap bytes, at least 64), cut to fit; returns
 * its length. No allocation: usable from a hook. */
size_t rlt__log_line(char *line, size_t cap, pid_t pid, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

#endif
