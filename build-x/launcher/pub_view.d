build-x/launcher/pub_view.o: launcher/pub_view.c src/clock.h \
 include/rlthrottle.h src/error.h src/proc_stat.h launcher/pub_view.h \
 src/publish.h src/policy.h src/stats.h
src/clock.h:
include/rlthrottle.h:
src/error.h:
src/proc_stat.h:
launcher/pub_view.h:
src/publish.h:
src/policy.h:
src/stats.h:
