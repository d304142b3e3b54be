build-x/trap/src/wait.o: src/wait.c preload/nolibc/nolibc.h src/clock.h \
 include/rlthrottle.h src/wait.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/wait.h:
