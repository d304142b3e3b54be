build-x/tests/test_scope_shm: tests/unit/test_scope_shm.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h src/keytab.h \
 src/policy.h src/policy.h src/scope_shm.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/policy.h:
src/scope_shm.h:
