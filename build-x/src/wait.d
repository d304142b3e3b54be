build-x/src/wait.o: src/wait.c src/clock.h include/rlthrottle.h \
 src/wait.h
src/clock.h:
include/rlthrottle.h:
src/wait.h:
