build-x/trap/src/scope_redis.o: src/scope_redis.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h src/engine.h src/hiredis_dl.h \
 src/keytab.h src/policy.h src/redis_client.h src/redis_scripts.h \
 src/scope_redis.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/engine.h:
src/hiredis_dl.h:
src/keytab.h:
src/policy.h:
src/redis_client.h:
src/redis_scripts.h:
src/scope_redis.h:
