build-x/trap/src/errno_names.o: src/errno_names.c preload/nolibc/nolibc.h \
 include/rlthrottle.h
preload/nolibc/nolibc.h:
include/rlthrottle.h:
