build-x/tests/test_connect_attempt: tests/unit/test_connect_attempt.c \
 src/policy.h include/rlthrottle.h tests/unit/testutil.h
src/policy.h:
include/rlthrottle.h:
tests/unit/testutil.h:
