build-x/tests/test_charge: tests/unit/test_charge.c tests/unit/testutil.h \
 src/clock.h include/rlthrottle.h src/keytab.h src/policy.h src/pacing.h \
 src/clock.h src/policy.h src/stats.h src/wait.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/pacing.h:
src/clock.h:
src/policy.h:
src/stats.h:
src/wait.h:
