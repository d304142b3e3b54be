build-x/trap/src/keytab.o: src/keytab.c preload/nolibc/nolibc.h \
 src/keytab.h src/policy.h include/rlthrottle.h src/proc_stat.h
preload/nolibc/nolibc.h:
src/keytab.h:
src/policy.h:
include/rlthrottle.h:
src/proc_stat.h:
