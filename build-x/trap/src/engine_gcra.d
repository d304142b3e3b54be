build-x/trap/src/engine_gcra.o: src/engine_gcra.c preload/nolibc/nolibc.h \
 src/engine.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/engine.h:
include/rlthrottle.h:
