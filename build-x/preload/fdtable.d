build-x/preload/fdtable.o: preload/fdtable.c preload/preload.h \
 src/policy.h include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
