build-x/tests/test_policy: tests/unit/test_policy.c tests/unit/testutil.h \
 src/policy.h include/rlthrottle.h
tests/unit/testutil.h:
src/policy.h:
include/rlthrottle.h:
