build-x/src/pacing.o: src/pacing.c src/pacing.h src/clock.h \
 include/rlthrottle.h src/policy.h
src/pacing.h:
src/clock.h:
include/rlthrottle.h:
src/policy.h:
