build-x/tests/test_engine_gcra: tests/unit/test_engine_gcra.c \
 tests/unit/testutil.h include/rlthrottle.h
tests/unit/testutil.h:
include/rlthrottle.h:
