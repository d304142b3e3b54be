build-x/src/engine_log.o: src/engine_log.c src/engine.h \
 include/rlthrottle.h
src/engine.h:
include/rlthrottle.h:
