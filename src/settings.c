/* settings.c: see settings.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int bad(struct rlt_error *err, const char *var, const char *val, const char *why)
{
	snprintf(err->msg, sizeof err->msg, "%s=\"%.100s\": %s", var, val, why);
	return -EINVAL;
}

int rlt__settings_read(struct rlt__settings *st, struct rlt_error *err)
{
	const char *v;

	memset(st, 0, sizeof *st);
	st->loglevel = RLT_LOG_WARN;
	st->inherit = 1;
	if ((v = getenv("RLT_LOG")) && *v) {
		st->loglevel = -1;
		for (int i = 0; i < 4; i++)
			if (strcmp(v, level_names[i]) == 0)
				st->loglevel = i;
		if (st->loglevel < 0)
			return bad(err, "RLT_LOG", v, "unknown level (error, warn, info, debug)");
	}
	if ((v = getenv("RLT_ON_ERROR")) && *v) {
		if (strcmp(v, "ignore") == 0)
			st->ignore_bad = 1;
		else if (strcmp(v, "exit") != 0)
			return bad(err, "RLT_ON_ERROR", v, "must be exit or ignore");
	}
	if ((v = getenv("RLT_INHERIT")) && *v) {
		if (strcmp(v, "0") == 0)
			st->inherit = 0;
		else if (strcmp(v, "1") != 0)
			return bad(err, "RLT_INHERIT", v, "must be 0 or 1");
	}
	if ((v = getenv("RLT_STATS")) && *v) {
		if (strlen(v) >= sizeof st->stats) {
			snprintf(err->msg, sizeof err->msg, "RLT_STATS: the path is too long");
			return -EINVAL;
		}
		strcpy(st->stats, v);
	}
	return 0;
}

size_t rlt__log_line(char *line, size_t cap, pid_t pid, const char *fmt, va_list ap)
{
	int n = snprintf(line, cap, "rlthrottle[%d]: ", (int)pid);
	n += vsnprintf(line + n, cap - (size_t)n - 1, fmt, ap);
	if (n > (int)cap - 2)
		n = (int)cap - 2;
	line[n++] = '\n';
	return (size_t)n;
}
