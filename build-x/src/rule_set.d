build-x/src/rule_set.o: src/rule_set.c src/clock.h include/rlthrottle.h \
 src/engine.h src/error.h src/keytab.h src/policy.h src/rule_set.h \
 src/publish.h src/scope_shm.h
src/clock.h:
include/rlthrottle.h:
src/engine.h:
src/error.h:
src/keytab.h:
src/policy.h:
src/rule_set.h:
src/publish.h:
src/scope_shm.h:
