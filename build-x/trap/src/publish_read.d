build-x/trap/src/publish_read.o: src/publish_read.c \
 preload/nolibc/nolibc.h src/clock.h include/rlthrottle.h src/error.h \
 src/keytab.h src/policy.h src/proc_stat.h src/publish.h \
 src/publish_page.h
preload/nolibc/nolibc.h:
src/clock.h:
include/rlthrottle.h:
src/error.h:
src/keytab.h:
src/policy.h:
src/proc_stat.h:
src/publish.h:
src/publish_page.h:
