build-x/src/conns.o: src/conns.c src/clock.h include/rlthrottle.h \
 src/keytab.h src/policy.h src/proc_stat.h src/publish.h src/scope_shm.h \
 src/stats_count.h src/wait.h
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/scope_shm.h:
src/stats_count.h:
src/wait.h:
