build-x/trap/src/publish.o: src/publish.c preload/nolibc/nolibc.h \
 src/clock.h include/rlthrottle.h src/keytab.h src/policy.h \
 src/proc_stat.h src/publish.h src/publish_page.h src/stats_count.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/keytab.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/publish_page.h:
src/stats_count.h:
