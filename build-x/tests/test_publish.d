build-x/tests/test_publish: tests/unit/test_publish.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h src/policy.h \
 src/proc_stat.h src/publish.h src/policy.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/policy.h:
