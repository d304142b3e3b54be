build-x/trap/src/error.o: src/error.c preload/nolibc/nolibc.h src/error.h \
 include/rlthrottle.h
preload/nolibc/nolibc.h:
src/error.h:
include/rlthrottle.h:
