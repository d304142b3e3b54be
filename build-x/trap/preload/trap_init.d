build-x/trap/preload/trap_init.o: preload/trap_init.c \
 preload/nolibc/nolibc.h preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h src/inject_proto.h preload/trap.h \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h \
 preload/nolibc/start.h src/trap_abi.h preload/trap_exec.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
src/inject_proto.h:
preload/trap.h:
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
src/trap_abi.h:
preload/trap_exec.h:
