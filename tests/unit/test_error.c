/* test_error.c: src/error.c: a message formatted into the error and the code handed back, a
 * message longer than the error holds cut, never overrun. */
#include <string.h>

#include "testutil.h"
#include "error.h"

static void formats_and_returns_the_code(void **s)
{
	struct rlt_error err = {{0}};

	(void)s;
	assert_int_equal(rlt__fail(&err, -22, "%s=\"%d\": no", "RLT_SEND", 7), -22);
	assert_string_equal(err.msg, "RLT_SEND=\"7\": no");
}

static void a_long_message_is_cut(void **s)
{
	struct rlt_error err;
	char big[3 * sizeof err.msg];

	(void)s;
	memset(&err, 'x', sizeof err);
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(rlt__fail(&err, 125, "%s", big), 125);
	assert_int_equal(strlen(err.msg), sizeof err.msg - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formats_and_returns_the_code),
		cmocka_unit_test(a_long_message_is_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
