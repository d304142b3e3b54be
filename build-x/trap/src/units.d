build-x/trap/src/units.o: src/units.c preload/nolibc/nolibc.h src/units.h \
 include/rlthrottle.h
preload/nolibc/nolibc.h:
src/units.h:
include/rlthrottle.h:
