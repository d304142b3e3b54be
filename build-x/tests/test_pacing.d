build-x/tests/test_pacing: tests/unit/test_pacing.c tests/unit/testutil.h \
 src/pacing.h src/clock.h include/rlthrottle.h src/policy.h src/policy.h
tests/unit/testutil.h:
src/pacing.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
src/policy.h:
