build-x/trap/preload/hook_fd.o: preload/hook_fd.c preload/nolibc/nolibc.h \
 preload/preload.h src/policy.h include/rlthrottle.h src/settings.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
