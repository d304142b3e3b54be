build-x/launcher/check.o: launcher/check.c launcher/launcher.h \
 src/policy.h include/rlthrottle.h src/scope_redis.h src/redis_client.h \
 src/settings.h
launcher/launcher.h:
src/policy.h:
include/rlthrottle.h:
src/scope_redis.h:
src/redis_client.h:
src/settings.h:
