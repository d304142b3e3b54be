/* test_settings.c: src/settings.c: RLT_LOG, RLT_ON_ERROR, RLT_INHERIT and RLT_STATS as rlthrottle(7) RULES
 * has them (defaults, every accepted value, a bad value refused with a message that names the
 * variable and quotes the value), and the one format of a log line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "settings.h"

static const char *const vars[] = {"RLT_LOG", "RLT_ON_ERROR", "RLT_INHERIT", "RLT_STATS"};

static int clean_env(void **s)
{
	(void)s;
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	return 0;
}

/* Reads into a struct full of garbage, so that a default not set shows. */
static int read_settings(struct rlt__settings *st, struct rlt_error *err)
{
	memset(st, 0x5a, sizeof *st);
	memset(err, 0, sizeof *err);
	return rlt__settings_read(st, err);
}

/* Reads with VAR=VAL the only one set. */
static int read_one(const char *var, const char *val, struct rlt__settings *st,
                    struct rlt_error *err)
{
	clean_env(NULL);
	setenv(var, val, 1);
	return read_settings(st, err);
}

/* Sets the four variables (NULL leaves one unset), reads them, and checks what came out. */
static void expect_read(const char *log, const char *on_error, const char *inherit,
                        const char *stats, int loglevel, int ignore_bad, int inh,
                        const char *want_stats)
{
	const char *val[] = {log, on_error, inherit, stats};
	struct rlt__settings st;
	struct rlt_error err;

	clean_env(NULL);
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		if (val[i])
			setenv(vars[i], val[i], 1);
	if (read_settings(&st, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(st.loglevel, loglevel);
	assert_int_equal(st.ignore_bad, ignore_bad);
	assert_int_equal(st.inherit, inh);
	assert_string_equal(st.stats, want_stats);
}

static void defaults(void **s)
{
	(void)s;
	expect_read(NULL, NULL, NULL, NULL, RLT_LOG_WARN, 0, 1, "");
	/* set but empty is unset */
	expect_read("", "", "", "", RLT_LOG_WARN, 0, 1, "");
}

static void every_value(void **s)
{
	static const struct {
		const char *var, *val;
		int loglevel, ignore_bad, inherit;
	} cases[] = {
		{"RLT_LOG", "error", RLT_LOG_ERROR, 0, 1},
		{"RLT_LOG", "warn", RLT_LOG_WARN, 0, 1},
		{"RLT_LOG", "info", RLT_LOG_INFO, 0, 1},
		{"RLT_LOG", "debug", RLT_LOG_DEBUG, 0, 1},
		{"RLT_ON_ERROR", "exit", RLT_LOG_WARN, 0, 1},
		{"RLT_ON_ERROR", "ignore", RLT_LOG_WARN, 1, 1},
		{"RLT_INHERIT", "1", RLT_LOG_WARN, 0, 1},
		{"RLT_INHERIT", "0", RLT_LOG_WARN, 0, 0},
	};
	struct rlt__settings st;
	struct rlt_error err;
	(void)s;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (read_one(cases[i].var, cases[i].val, &st, &err) != 0)
			fail_msg("%s=%s: %s", cases[i].var, cases[i].val, err.msg);
		assert_int_equal(st.loglevel, cases[i].loglevel);
		assert_int_equal(st.ignore_bad, cases[i].ignore_bad);
		assert_int_equal(st.inherit, cases[i].inherit);
		assert_string_equal(st.stats, "");
	}
	/* all at once */
	expect_read("debug", "ignore", "0", "/tmp/rlt.%p.json", RLT_LOG_DEBUG, 1, 0,
	            "/tmp/rlt.%p.json");
	expect_read("debug", "ignore", "0", "stderr", RLT_LOG_DEBUG, 1, 0, "stderr");
}

/* A bad value is never guessed at: near misses are refused as firmly as nonsense. */
static void bad_values(void **s)
{
	static const struct {
		const char *var, *val, *msg;
	} cases[] = {
		{"RLT_LOG", "WARN", "RLT_LOG=\"WARN\": unknown level (error, warn, info, debug)"},
		{"RLT_LOG", "warning", "RLT_LOG=\"warning\": unknown level (error, warn, info, debug)"},
		{"RLT_LOG", "2", "RLT_LOG=\"2\": unknown level (error, warn, info, debug)"},
		{"RLT_LOG", "in fo", "RLT_LOG=\"in fo\": unknown level (error, warn, info, debug)"},
		{"RLT_LOG", "debug2", "RLT_LOG=\"debug2\": unknown level (error, warn, info, debug)"},
		{"RLT_ON_ERROR", "Exit", "RLT_ON_ERROR=\"Exit\": must be exit or ignore"},
		{"RLT_ON_ERROR", "warn", "RLT_ON_ERROR=\"warn\": must be exit or ignore"},
		{"RLT_INHERIT", "yes", "RLT_INHERIT=\"yes\": must be 0 or 1"},
		{"RLT_INHERIT", "00", "RLT_INHERIT=\"00\": must be 0 or 1"},
		{"RLT_INHERIT", "1 1", "RLT_INHERIT=\"1 1\": must be 0 or 1"},
		{"RLT_INHERIT", "2", "RLT_INHERIT=\"2\": must be 0 or 1"},
	};
	struct rlt__settings st;
	struct rlt_error err;
	(void)s;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (read_one(cases[i].var, cases[i].val, &st, &err) != -EINVAL)
			fail_msg("%s=\"%s\" was accepted", cases[i].var, cases[i].val);
		assert_string_equal(err.msg, cases[i].msg);
	}
	/* a bad value beside good ones is still refused */
	clean_env(NULL);
	setenv("RLT_LOG", "info", 1);
	setenv("RLT_INHERIT", "true", 1);
	assert_int_equal(read_settings(&st, &err), -EINVAL);
	assert_string_equal(err.msg, "RLT_INHERIT=\"true\": must be 0 or 1");
}

/* A long bad value is quoted in part, so that the line stays one readable line. */
static void long_values(void **s)
{
	char val[600], want[300];
	struct rlt__settings st;
	struct rlt_error err;
	(void)s;
	memset(val, 'x', sizeof val - 1);
	val[sizeof val - 1] = '\0';
	setenv("RLT_LOG", val, 1);
	assert_int_equal(read_settings(&st, &err), -EINVAL);
	snprintf(want, sizeof want, "RLT_LOG=\"%.100s\": unknown level (error, warn, info, debug)",
	         val);
	assert_string_equal(err.msg, want);

	/* RLT_STATS holds up to RLT_STATS_PATH_MAX - 1 bytes, and refuses more */
	clean_env(NULL);
	char path[RLT_STATS_PATH_MAX + 1];
	memset(path, 'p', sizeof path);
	path[0] = '/';
	path[RLT_STATS_PATH_MAX - 1] = '\0';
	setenv("RLT_STATS", path, 1);
	assert_int_equal(read_settings(&st, &err), 0);
	assert_string_equal(st.stats, path);
	path[RLT_STATS_PATH_MAX - 1] = 'p';
	path[RLT_STATS_PATH_MAX] = '\0';
	setenv("RLT_STATS", path, 1);
	assert_int_equal(read_settings(&st, &err), -EINVAL);
	assert_string_equal(err.msg, "RLT_STATS: the path is too long");
}

static size_t log_line(char *line, size_t cap, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t log_line(char *line, size_t cap, pid_t pid, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = rlt__log_line(line, cap, pid, fmt, ap);
	va_end(ap);
	return n;
}

static void a_log_line(void **s)
{
	char line[300];
	(void)s;
	size_t n = log_line(line, 256, 4242, "rule %d: %s", 3, "too slow");
	assert_int_equal(n, strlen("rlthrottle[4242]: rule 3: too slow\n"));
	assert_memory_equal(line, "rlthrottle[4242]: rule 3: too slow\n", n);
	n = log_line(line, 256, 1, "%s", "");
	assert_int_equal(n, strlen("rlthrottle[1]: \n"));
	assert_memory_equal(line, "rlthrottle[1]: \n", n);
}

/* A message longer than the line is cut, keeps its newline, and nothing is written past cap. */
static void a_long_log_line_is_cut(void **s)
{
	char line[300], msg[400], want[500];
	(void)s;
	memset(msg, 'm', sizeof msg - 1);
	msg[sizeof msg - 1] = '\0';
	for (size_t cap = 64; cap <= 128; cap++) {
		memset(line, '#', sizeof line);
		size_t n = log_line(line, cap, 77, "%s", msg);
		assert_int_equal(n, cap - 1);
		snprintf(want, sizeof want, "rlthrottle[77]: %s", msg);
		assert_memory_equal(line, want, n - 1);
		assert_int_equal(line[n - 1], '\n');
		for (size_t i = cap; i < sizeof line; i++)
			assert_int_equal(line[i], '#');
	}
	/* a message that just fits is whole, the one a byte longer is cut by that byte */
	const size_t pre = strlen("rlthrottle[77]: ");
	memset(line, '#', sizeof line);
	size_t n = log_line(line, 64, 77, "%.*s", (int)(64 - 2 - pre), msg);
	assert_int_equal(n, 63);
	assert_int_equal(line[62], '\n');
	assert_int_equal(line[61], 'm');
	n = log_line(line, 64, 77, "%.*s", (int)(64 - 1 - pre), msg);
	assert_int_equal(n, 63);
	assert_int_equal(line[62], '\n');
	assert_int_equal(line[64], '#');
}

/* Blanks (issue 9): trimmed as the rule variables trim them; a blank value is unset. */
static void blanks_are_trimmed(void **state)
{
	(void)state;
	expect_read(" warn", "ignore\t", " 0 ", "  /tmp/x.json ", RLT_LOG_WARN, 1, 0, "/tmp/x.json");
	expect_read("\tdebug  ", "ignore\t", " 0 ", "  /tmp/x.json ", RLT_LOG_DEBUG, 1, 0,
	            "/tmp/x.json");
	clean_env(NULL);
}

static void blank_is_unset(void **state)
{
	(void)state;
	expect_read(" ", "\t", "  ", " ", RLT_LOG_WARN, 0, 1, "");
	clean_env(NULL);
}

static void bad_values_still_refused(void **state)
{
	struct rlt__settings st;
	struct rlt_error err;
	(void)state;
	clean_env(NULL);
	setenv("RLT_LOG", " war n", 1);
	assert_int_not_equal(rlt__settings_read(&st, &err), 0);
	assert_non_null(strstr(err.msg, "RLT_LOG="));
	clean_env(NULL);
	setenv("RLT_INHERIT", "01", 1);
	assert_int_not_equal(rlt__settings_read(&st, &err), 0);
	assert_non_null(strstr(err.msg, "RLT_INHERIT="));
	clean_env(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(defaults, clean_env),
		cmocka_unit_test_setup(every_value, clean_env),
		cmocka_unit_test_setup(bad_values, clean_env),
		cmocka_unit_test_setup(long_values, clean_env),
		cmocka_unit_test(a_log_line),
		cmocka_unit_test(a_long_log_line_is_cut),
		cmocka_unit_test(blanks_are_trimmed),
		cmocka_unit_test(blank_is_unset),
		cmocka_unit_test(bad_values_still_refused),
	};
	return cmocka_run_group_tests_name("settings", tests, NULL, NULL);
}
