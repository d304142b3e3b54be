/* test_ruleset_env.c: src/ruleset_env.c: the rules read from the environment as both fronts load
 * them: statistics on with RLT_STATS, a bad rule left out with its warning through the sink under
 * RLT_ON_ERROR=ignore (and refused without), the sink made the scopes' (Redis outage) sink, and
 * the rules in force logged in canonical form with the front's tail. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "ruleset_env.h"
#include "scope_redis.h"

static char lines[8][600];
static int levels[8];
static int nlines;

static void sink(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sink(int level, const char *fmt, ...)
{
	va_list ap;

	if (nlines == 8)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[nlines], sizeof lines[0], fmt, ap);
	va_end(ap);
	levels[nlines++] = level;
}

static int clean(void **s)
{
	(void)s;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		unsetenv(rlt_var_name((enum rlt_var)v));
	nlines = 0;
	rlt__scope_log = NULL;
	return 0;
}

static struct rlt__ruleset rs; /* large */

static void bad_rule_left_out_with_a_warning(void **s)
{
	struct rlt__settings set = {.loglevel = RLT_LOG_WARN, .ignore_bad = 1, .inherit = 1};
	struct rlt_error err = {{0}};
	(void)s;
	memset(&rs, 0, sizeof rs);
	setenv("RLT_SEND", "10KiB/s; 5 parsecs/s", 1);
	assert_int_equal(rlt__ruleset_from_env(&rs, &set, sink, &err), 0);
	assert_int_equal(rs.n[RLT_VAR_SEND], 1);
	assert_int_equal(rs.stats_on, 0);
	assert_int_equal(nlines, 1);
	assert_int_equal(levels[0], RLT_LOG_WARN);
	assert_non_null(strstr(lines[0], "RLT_SEND"));
	assert_non_null(strstr(lines[0], "(rule ignored: RLT_ON_ERROR=ignore)"));
	assert_ptr_equal(rlt__scope_log, sink);
}

static void bad_rule_refused(void **s)
{
	struct rlt__settings set = {.loglevel = RLT_LOG_WARN, .inherit = 1};
	struct rlt_error err = {{0}};
	(void)s;
	memset(&rs, 0, sizeof rs);
	setenv("RLT_RECV", "5 parsecs/s", 1);
	assert_int_equal(rlt__ruleset_from_env(&rs, &set, sink, &err), -1);
	assert_non_null(strstr(err.msg, "RLT_RECV"));
	assert_int_equal(nlines, 0);
}

static void stats_and_the_rules_in_force(void **s)
{
	struct rlt__settings set = {.loglevel = RLT_LOG_INFO, .inherit = 1};
	struct rlt_error err = {{0}};
	(void)s;
	memset(&rs, 0, sizeof rs);
	strcpy(set.stats, "/tmp/st.json");
	setenv("RLT_CONNECT", "20/s", 1);
	setenv("RLT_CONNS", "4", 1);
	assert_int_equal(rlt__ruleset_from_env(&rs, &set, sink, &err), 0);
	assert_int_equal(rs.stats_on, 1);
	rlt__ruleset_log(&rs, sink, " (tail)");
	assert_int_equal(nlines, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(levels[i], RLT_LOG_INFO);
		assert_non_null(strstr(lines[i], " (tail)"));
	}
	assert_non_null(strstr(lines[0], "RLT_CONNECT: 20/s"));
	assert_non_null(strstr(lines[1], "RLT_CONNS: 4"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(bad_rule_left_out_with_a_warning, clean),
		cmocka_unit_test_setup(bad_rule_refused, clean),
		cmocka_unit_test_setup(stats_and_the_rules_in_force, clean),
	};
	return cmocka_run_group_tests_name("ruleset_env", tests, NULL, NULL);
}
