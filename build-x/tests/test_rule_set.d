build-x/tests/test_rule_set: tests/unit/test_rule_set.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h src/policy.h \
 src/publish.h src/policy.h src/rule_set.h src/publish.h src/scope_shm.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
src/publish.h:
src/policy.h:
src/rule_set.h:
src/publish.h:
src/scope_shm.h:
