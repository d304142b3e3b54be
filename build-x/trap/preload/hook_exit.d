build-x/trap/preload/hook_exit.o: preload/hook_exit.c \
 preload/nolibc/nolibc.h preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
