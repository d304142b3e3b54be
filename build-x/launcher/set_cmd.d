build-x/launcher/set_cmd.o: launcher/set_cmd.c src/clock.h \
 include/rlthrottle.h launcher/launcher.h src/publish.h src/policy.h \
 src/rule_set.h src/publish.h
src/clock.h:
include/rlthrottle.h:
launcher/launcher.h:
src/publish.h:
src/policy.h:
src/rule_set.h:
src/publish.h:
