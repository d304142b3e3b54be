build-x/trap/src/engine_log.o: src/engine_log.c preload/nolibc/nolibc.h \
 src/engine.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/engine.h:
include/rlthrottle.h:
