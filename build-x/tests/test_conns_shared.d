build-x/tests/test_conns_shared: tests/unit/test_conns_shared.c \
 tests/unit/testutil.h src/policy.h include/rlthrottle.h src/scope_shm.h
tests/unit/testutil.h:
src/policy.h:
include/rlthrottle.h:
src/scope_shm.h:
