build-x/trap/preload/fdtable.o: preload/fdtable.c preload/nolibc/nolibc.h \
 preload/preload.h src/policy.h include/rlthrottle.h src/settings.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
