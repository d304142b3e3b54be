build-x/launcher/top.o: launcher/top.c src/clock.h include/rlthrottle.h \
 launcher/launcher.h launcher/pub_view.h src/publish.h src/policy.h
src/clock.h:
include/rlthrottle.h:
launcher/launcher.h:
launcher/pub_view.h:
src/publish.h:
src/policy.h:
