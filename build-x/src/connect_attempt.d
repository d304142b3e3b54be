build-x/src/connect_attempt.o: src/connect_attempt.c src/policy.h \
 include/rlthrottle.h
src/policy.h:
include/rlthrottle.h:
