build-x/trap/preload/load.o: preload/load.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h preload/preload.h src/policy.h \
 src/settings.h src/publish.h src/policy.h src/ruleset_env.h \
 src/settings.h src/stats.h src/stats_count.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
preload/preload.h:
src/policy.h:
src/settings.h:
src/publish.h:
src/policy.h:
src/ruleset_env.h:
src/settings.h:
src/stats.h:
src/stats_count.h:
