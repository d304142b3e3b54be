build-x/src/keytab.o: src/keytab.c src/keytab.h src/policy.h \
 include/rlthrottle.h src/proc_stat.h
src/keytab.h:
src/policy.h:
include/rlthrottle.h:
src/proc_stat.h:
