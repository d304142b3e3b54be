build-x/tests/test_units: tests/unit/test_units.c tests/unit/testutil.h \
 src/units.h include/rlthrottle.h
tests/unit/testutil.h:
src/units.h:
include/rlthrottle.h:
