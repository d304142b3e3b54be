/* settings.c: see settings.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_command.h"
#include "settings.h"

static const char *const level_names[] = {"error", "warn", "info", "debug"};

static int bad(struct rlt_error *err, const char *var, const char *val, const char *why)
{
	snprintf(err->msg, sizeof err->msg, "%s=\"%.100s\": %s", var, val, why);
	return -EINVAL;
}

/*
 * A variable's value without the blanks (spaces, tabs) around it, as the rule variables are
 * read: RLT_LOG=" warn" is warn, and a blank value is unset, like RLT_SEND=" ". NULL when unset
 * or blank; cut to fit buf.
 */
static const char *trimmed(const char *name, char *buf, size_t cap)
{
	const char *v = getenv(name);
	size_t n;

	if (!v)
		return NULL;
	v += strspn(v, " \t");
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0)
		return NULL;
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

/* A switch that is 0 or 1 (unset or blank: *on as it was). */
static int switch_01(const char *name, int *on, struct rlt_error *err)
{
	char buf[128]; /* more than the 100 bytes a message quotes */
	const char *v = trimmed(name, buf, sizeof buf);

	if (!v || strcmp(v, "1") == 0)
		return 0;
	if (strcmp(v, "0") == 0) {
		*on = 0;
		return 0;
	}
	return bad(err, name, v, "must be 0 or 1");
}

int rlt__settings_read(struct rlt__settings *st, struct rlt_error *err)
{
	char buf[RLT_STATS_PATH_MAX + 1];
	const char *v;

	memset(st, 0, sizeof *st);
	st->loglevel = RLT_LOG_WARN;
	st->inherit = 1;
	st->publish = 1;
	if ((v = trimmed("RLT_LOG", buf, sizeof buf))) {
		st->loglevel = -1;
		for (int i = 0; i < 4; i++)
			if (strcmp(v, level_names[i]) == 0)
				st->loglevel = i;
		if (st->loglevel < 0)
			return bad(err, "RLT_LOG", v, "unknown level (error, warn, info, debug)");
	}
	if ((v = trimmed("RLT_ON_ERROR", buf, sizeof buf))) {
		if (strcmp(v, "ignore") == 0)
			st->ignore_bad = 1;
		else if (strcmp(v, "exit") != 0)
			return bad(err, "RLT_ON_ERROR", v, "must be exit or ignore");
	}
	if (switch_01("RLT_INHERIT", &st->inherit, err) ||
	    switch_01("RLT_PUBLISH", &st->publish, err))
		return -EINVAL;
	if ((v = trimmed("RLT_STATS", buf, sizeof buf))) {
		if (strlen(v) >= sizeof st->stats) {
			snprintf(err->msg, sizeof err->msg, "RLT_STATS: the path is too long");
			return -EINVAL;
		}
		/* "-" would name a file "-": stdout is the program's own, so it is not taken
		 * for it either */
		if (strcmp(v, "-") == 0)
			return bad(err, "RLT_STATS", v,
			           "not a path (stdout is the program's): write stderr, or a path");
		strcpy(st->stats, v);
	}
	if ((v = trimmed(RLT_CMD_ENV, buf, sizeof buf))) {
		_Static_assert(sizeof st->command == RLT_CMD_NAME_MAX + 1, "the NAME's room");
		if (!rlt__cmd_name_ok(v))
			return bad(err, RLT_CMD_ENV, v,
			           "not a command's name (letters, digits, \"_\", \"-\"; set by the "
			           "launcher)");
		strcpy(st->command, v);
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
