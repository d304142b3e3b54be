build-x/src/engine_gcra.o: src/engine_gcra.c src/engine.h \
 include/rlthrottle.h
src/engine.h:
include/rlthrottle.h:
