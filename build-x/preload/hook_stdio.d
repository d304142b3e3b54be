build-x/preload/hook_stdio.o: preload/hook_stdio.c preload/preload.h \
 src/policy.h include/rlthrottle.h src/settings.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
