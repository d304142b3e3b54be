build-x/trap/src/engine_lock.o: src/engine_lock.c preload/nolibc/nolibc.h \
 src/engine.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/engine.h:
include/rlthrottle.h:
