build-x/trap/src/engine_window.o: src/engine_window.c \
 preload/nolibc/nolibc.h src/engine.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/engine.h:
include/rlthrottle.h:
