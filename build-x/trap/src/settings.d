build-x/trap/src/settings.o: src/settings.c preload/nolibc/nolibc.h \
 src/settings.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/settings.h:
include/rlthrottle.h:
