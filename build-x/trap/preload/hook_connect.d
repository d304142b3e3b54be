build-x/trap/preload/hook_connect.o: preload/hook_connect.c \
 preload/nolibc/nolibc.h preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
