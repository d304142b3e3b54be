build-x/preload/hook_fd.o: preload/hook_fd.c preload/preload.h \
 src/policy.h include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
