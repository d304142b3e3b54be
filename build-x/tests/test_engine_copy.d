build-x/tests/test_engine_copy: tests/unit/test_engine_copy.c \
 tests/unit/testutil.h include/rlthrottle.h
tests/unit/testutil.h:
include/rlthrottle.h:
