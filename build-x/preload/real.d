build-x/preload/real.o: preload/real.c preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
