build-x/src/ruleset_env.o: src/ruleset_env.c src/ruleset_env.h \
 src/policy.h include/rlthrottle.h src/settings.h src/scope_redis.h \
 src/redis_client.h
src/ruleset_env.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
src/scope_redis.h:
src/redis_client.h:
