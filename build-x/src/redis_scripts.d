build-x/src/redis_scripts.o: src/redis_scripts.c src/redis_scripts.h \
 include/rlthrottle.h
src/redis_scripts.h:
include/rlthrottle.h:
