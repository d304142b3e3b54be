build-x/tests/test_proc_stat: tests/unit/test_proc_stat.c \
 tests/unit/testutil.h src/proc_stat.h
tests/unit/testutil.h:
src/proc_stat.h:
