build-x/src/scope_redis.o: src/scope_redis.c src/clock.h \
 include/rlthrottle.h src/engine.h src/hiredis_dl.h src/keytab.h \
 src/policy.h src/redis_client.h src/redis_scripts.h src/scope_redis.h
src/clock.h:
include/rlthrottle.h:
src/engine.h:
src/hiredis_dl.h:
src/keytab.h:
src/policy.h:
src/redis_client.h:
src/redis_scripts.h:
src/scope_redis.h:
