build-x/src/publish_read.o: src/publish_read.c src/clock.h \
 include/rlthrottle.h src/error.h src/keytab.h src/policy.h \
 src/proc_stat.h src/publish.h src/publish_page.h
src/clock.h:
include/rlthrottle.h:
src/error.h:
src/keytab.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/publish_page.h:
