build-x/tests/test_wait: tests/unit/test_wait.c tests/unit/testutil.h \
 src/clock.h include/rlthrottle.h src/wait.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/wait.h:
