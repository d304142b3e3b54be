build-x/trap/src/redis_scripts.o: src/redis_scripts.c \
 preload/nolibc/nolibc.h src/redis_scripts.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/redis_scripts.h:
include/rlthrottle.h:
