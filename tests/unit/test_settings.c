/* test_settings.c: RLT_LOG, RLT_ON_ERROR, RLT_INHERIT and RLT_STATS as read from the
 * environment: blanks around a value are trimmed as the rule variables trim them, and a blank
 * value is unset (issue 9). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "settings.h"

static void clear(void)
{
	unsetenv("RLT_LOG");
	unsetenv("RLT_ON_ERROR");
	unsetenv("RLT_INHERIT");
	unsetenv("RLT_STATS");
}

static void blanks_are_trimmed(void **state)
{
	struct rlt__settings st;
	struct rlt_error err;
	(void)state;
	clear();
	setenv("RLT_LOG", " warn", 1);
	setenv("RLT_ON_ERROR", "ignore\t", 1);
	setenv("RLT_INHERIT", " 0 ", 1);
	setenv("RLT_STATS", "  /tmp/x.json ", 1);
	assert_int_equal(rlt__settings_read(&st, &err), 0);
	assert_int_equal(st.loglevel, RLT_LOG_WARN);
	assert_int_equal(st.ignore_bad, 1);
	assert_int_equal(st.inherit, 0);
	assert_string_equal(st.stats, "/tmp/x.json");
	setenv("RLT_LOG", "\tdebug  ", 1);
	assert_int_equal(rlt__settings_read(&st, &err), 0);
	assert_int_equal(st.loglevel, RLT_LOG_DEBUG);
	clear();
}

static void blank_is_unset(void **state)
{
	struct rlt__settings st;
	struct rlt_error err;
	(void)state;
	clear();
	setenv("RLT_LOG", " ", 1);
	setenv("RLT_ON_ERROR", "\t", 1);
	setenv("RLT_INHERIT", "  ", 1);
	setenv("RLT_STATS", " ", 1);
	assert_int_equal(rlt__settings_read(&st, &err), 0);
	assert_int_equal(st.loglevel, RLT_LOG_WARN);
	assert_int_equal(st.ignore_bad, 0);
	assert_int_equal(st.inherit, 1);
	assert_string_equal(st.stats, "");
	clear();
}

static void bad_values_still_refused(void **state)
{
	struct rlt__settings st;
	struct rlt_error err;
	(void)state;
	clear();
	setenv("RLT_LOG", " war n", 1);
	assert_int_not_equal(rlt__settings_read(&st, &err), 0);
	assert_non_null(strstr(err.msg, "RLT_LOG="));
	clear();
	setenv("RLT_INHERIT", "01", 1);
	assert_int_not_equal(rlt__settings_read(&st, &err), 0);
	assert_non_null(strstr(err.msg, "RLT_INHERIT="));
	clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blanks_are_trimmed),
		cmocka_unit_test(blank_is_unset),
		cmocka_unit_test(bad_values_still_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
