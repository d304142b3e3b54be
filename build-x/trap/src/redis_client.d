build-x/trap/src/redis_client.o: src/redis_client.c \
 preload/nolibc/nolibc.h src/clock.h include/rlthrottle.h \
 src/hiredis_dl.h src/policy.h src/redis_client.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/hiredis_dl.h:
src/policy.h:
src/redis_client.h:
