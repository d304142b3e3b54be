build-x/trap/src/scope_shm.o: src/scope_shm.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h src/keytab.h src/policy.h \
 src/scope_shm.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/scope_shm.h:
