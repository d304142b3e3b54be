build-x/preload/init.o: preload/init.c preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h src/trap_abi.h
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
src/trap_abi.h:
