build-x/tests/test_hiredis_dl: tests/unit/test_hiredis_dl.c \
 tests/unit/testutil.h src/hiredis_dl.h include/rlthrottle.h
tests/unit/testutil.h:
src/hiredis_dl.h:
include/rlthrottle.h:
