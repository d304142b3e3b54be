build-x/trap/preload/hook_send.o: preload/hook_send.c \
 preload/nolibc/nolibc.h src/clock.h include/rlthrottle.h src/iov.h \
 preload/preload.h src/policy.h src/settings.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/iov.h:
preload/preload.h:
src/policy.h:
src/settings.h:
