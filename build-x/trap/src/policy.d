build-x/trap/src/policy.o: src/policy.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h src/keytab.h src/policy.h \
 src/scope_redis.h src/redis_client.h src/scope_shm.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/scope_redis.h:
src/redis_client.h:
src/scope_shm.h:
