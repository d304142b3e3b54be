build-x/trap/preload/io_pacing.o: preload/io_pacing.c \
 preload/nolibc/nolibc.h src/clock.h include/rlthrottle.h src/iov.h \
 src/pacing.h src/clock.h src/policy.h preload/preload.h src/policy.h \
 src/settings.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/iov.h:
src/pacing.h:
src/clock.h:
src/policy.h:
preload/preload.h:
src/policy.h:
src/settings.h:
