build-x/trap/src/stats.o: src/stats.c preload/nolibc/nolibc.h \
 src/keytab.h src/policy.h include/rlthrottle.h src/stats.h
preload/nolibc/nolibc.h:
src/keytab.h:
src/policy.h:
include/rlthrottle.h:
src/stats.h:
