build-x/src/policy.o: src/policy.c src/clock.h include/rlthrottle.h \
 src/keytab.h src/policy.h src/scope_redis.h src/redis_client.h \
 src/scope_shm.h
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/scope_redis.h:
src/redis_client.h:
src/scope_shm.h:
