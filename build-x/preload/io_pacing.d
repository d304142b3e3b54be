build-x/preload/io_pacing.o: preload/io_pacing.c src/clock.h \
 include/rlthrottle.h src/iov.h src/pacing.h src/clock.h src/policy.h \
 preload/preload.h src/policy.h src/settings.h
src/clock.h:
include/rlthrottle.h:
src/iov.h:
src/pacing.h:
src/clock.h:
src/policy.h:
preload/preload.h:
src/policy.h:
src/settings.h:
