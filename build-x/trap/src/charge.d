build-x/trap/src/charge.o: src/charge.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h src/engine.h src/keytab.h src/policy.h \
 src/rule_set.h src/publish.h src/scope_redis.h src/redis_client.h \
 src/stats_count.h src/wait.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/engine.h:
src/keytab.h:
src/policy.h:
src/rule_set.h:
src/publish.h:
src/scope_redis.h:
src/redis_client.h:
src/stats_count.h:
src/wait.h:
