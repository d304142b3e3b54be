build-x/src/engine_lock.o: src/engine_lock.c src/engine.h \
 include/rlthrottle.h
src/engine.h:
include/rlthrottle.h:
