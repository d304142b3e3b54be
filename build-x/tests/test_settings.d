build-x/tests/test_settings: tests/unit/test_settings.c \
 tests/unit/testutil.h src/settings.h include/rlthrottle.h
tests/unit/testutil.h:
src/settings.h:
include/rlthrottle.h:
