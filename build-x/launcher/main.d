build-x/launcher/main.o: launcher/main.c launcher/launcher.h src/policy.h \
 include/rlthrottle.h launcher/pub_view.h src/publish.h src/policy.h
launcher/launcher.h:
src/policy.h:
include/rlthrottle.h:
launcher/pub_view.h:
src/publish.h:
src/policy.h:
