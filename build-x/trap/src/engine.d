build-x/trap/src/engine.o: src/engine.c preload/nolibc/nolibc.h \
 src/engine.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/engine.h:
include/rlthrottle.h:
