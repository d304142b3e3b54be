build-x/src/scope_shm.o: src/scope_shm.c src/clock.h include/rlthrottle.h \
 src/keytab.h src/policy.h src/scope_shm.h
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/scope_shm.h:
