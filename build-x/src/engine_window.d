build-x/src/engine_window.o: src/engine_window.c src/engine.h \
 include/rlthrottle.h
src/engine.h:
include/rlthrottle.h:
