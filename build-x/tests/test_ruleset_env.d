build-x/tests/test_ruleset_env: tests/unit/test_ruleset_env.c \
 tests/unit/testutil.h src/ruleset_env.h src/policy.h \
 include/rlthrottle.h src/settings.h src/scope_redis.h src/redis_client.h
tests/unit/testutil.h:
src/ruleset_env.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
src/scope_redis.h:
src/redis_client.h:
