build-x/tests/test_error: tests/unit/test_error.c tests/unit/testutil.h \
 src/error.h include/rlthrottle.h
tests/unit/testutil.h:
src/error.h:
include/rlthrottle.h:
