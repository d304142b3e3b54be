build-x/tests/test_redis_client: tests/unit/test_redis_client.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h \
 src/redis_client.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/redis_client.h:
