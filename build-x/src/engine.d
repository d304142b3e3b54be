build-x/src/engine.o: src/engine.c src/engine.h include/rlthrottle.h
src/engine.h:
include/rlthrottle.h:
