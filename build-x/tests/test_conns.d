build-x/tests/test_conns: tests/unit/test_conns.c src/clock.h \
 include/rlthrottle.h tests/unit/testutil.h src/policy.h
src/clock.h:
include/rlthrottle.h:
tests/unit/testutil.h:
src/policy.h:
