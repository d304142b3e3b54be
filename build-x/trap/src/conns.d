build-x/trap/src/conns.o: src/conns.c preload/nolibc/nolibc.h src/clock.h \
 include/rlthrottle.h src/keytab.h src/policy.h src/proc_stat.h \
 src/publish.h src/scope_shm.h src/stats_count.h src/wait.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/scope_shm.h:
src/stats_count.h:
src/wait.h:
