build-x/preload/hook_recv.o: preload/hook_recv.c src/clock.h \
 include/rlthrottle.h src/iov.h preload/preload.h src/policy.h \
 src/settings.h
src/clock.h:
include/rlthrottle.h:
src/iov.h:
preload/preload.h:
src/policy.h:
src/settings.h:
