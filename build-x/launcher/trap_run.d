build-x/launcher/trap_run.o: launcher/trap_run.c launcher/inject.h \
 src/inject_proto.h launcher/launcher.h src/trap_abi.h \
 launcher/trap_filter.h src/error.h include/rlthrottle.h
launcher/inject.h:
src/inject_proto.h:
launcher/launcher.h:
src/trap_abi.h:
launcher/trap_filter.h:
src/error.h:
include/rlthrottle.h:
