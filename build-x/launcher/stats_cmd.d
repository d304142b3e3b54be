build-x/launcher/stats_cmd.o: launcher/stats_cmd.c launcher/launcher.h \
 launcher/pub_view.h src/publish.h src/policy.h include/rlthrottle.h
launcher/launcher.h:
launcher/pub_view.h:
src/publish.h:
src/policy.h:
include/rlthrottle.h:
