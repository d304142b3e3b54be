build-x/preload/hook_exec.o: preload/hook_exec.c preload/preload.h \
 src/policy.h include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
