build-x/tests/test_engine_lock: tests/unit/test_engine_lock.c \
 tests/unit/engine_harness.h tests/unit/testutil.h src/engine.h \
 include/rlthrottle.h
tests/unit/engine_harness.h:
tests/unit/testutil.h:
src/engine.h:
include/rlthrottle.h:
