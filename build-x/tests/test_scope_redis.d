build-x/tests/test_scope_redis: tests/unit/test_scope_redis.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h src/policy.h \
 src/keytab.h src/policy.h src/scope_redis.h src/redis_client.h \
 tests/unit/redis_server.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
src/keytab.h:
src/policy.h:
src/scope_redis.h:
src/redis_client.h:
tests/unit/redis_server.h:
