build-x/src/redis_client.o: src/redis_client.c src/clock.h \
 include/rlthrottle.h src/hiredis_dl.h src/policy.h src/redis_client.h
src/clock.h:
include/rlthrottle.h:
src/hiredis_dl.h:
src/policy.h:
src/redis_client.h:
