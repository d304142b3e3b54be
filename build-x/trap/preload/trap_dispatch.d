build-x/trap/preload/trap_dispatch.o: preload/trap_dispatch.c \
 preload/nolibc/nolibc.h preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h preload/trap.h \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h \
 preload/nolibc/start.h src/trap_abi.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
preload/trap.h:
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
src/trap_abi.h:
