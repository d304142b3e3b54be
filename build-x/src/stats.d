build-x/src/stats.o: src/stats.c src/keytab.h src/policy.h \
 include/rlthrottle.h src/stats.h
src/keytab.h:
src/policy.h:
include/rlthrottle.h:
src/stats.h:
