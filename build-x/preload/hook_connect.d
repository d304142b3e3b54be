build-x/preload/hook_connect.o: preload/hook_connect.c preload/preload.h \
 src/policy.h include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
