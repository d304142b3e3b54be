build-x/trap/src/pacing.o: src/pacing.c preload/nolibc/nolibc.h \
 src/pacing.h src/clock.h include/rlthrottle.h src/policy.h
preload/nolibc/nolibc.h:
src/pacing.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
