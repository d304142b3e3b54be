build-x/preload/hook_send.o: preload/hook_send.c src/clock.h \
 include/rlthrottle.h src/iov.h preload/preload.h src/policy.h \
 src/settings.h
src/clock.h:
include/rlthrottle.h:
src/iov.h:
preload/preload.h:
src/policy.h:
src/settings.h:
