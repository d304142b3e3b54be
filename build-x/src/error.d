build-x/src/error.o: src/error.c src/error.h include/rlthrottle.h
src/error.h:
include/rlthrottle.h:
