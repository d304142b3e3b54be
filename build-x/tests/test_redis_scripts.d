build-x/tests/test_redis_scripts: tests/unit/test_redis_scripts.c \
 tests/unit/testutil.h src/clock.h include/rlthrottle.h src/hiredis_dl.h \
 src/redis_client.h src/redis_scripts.h tests/unit/redis_server.h \
 src/scope_redis.h src/redis_client.h
tests/unit/testutil.h:
src/clock.h:
include/rlthrottle.h:
src/hiredis_dl.h:
src/redis_client.h:
src/redis_scripts.h:
tests/unit/redis_server.h:
src/scope_redis.h:
src/redis_client.h:
