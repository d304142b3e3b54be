build-x/tests/test_stats: tests/unit/test_stats.c tests/unit/testutil.h \
 src/stats.h src/policy.h include/rlthrottle.h
tests/unit/testutil.h:
src/stats.h:
src/policy.h:
include/rlthrottle.h:
