build-x/trap/src/connect_attempt.o: src/connect_attempt.c \
 preload/nolibc/nolibc.h src/policy.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/policy.h:
include/rlthrottle.h:
