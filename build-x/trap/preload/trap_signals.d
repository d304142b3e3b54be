build-x/trap/preload/trap_signals.o: preload/trap_signals.c \
 preload/nolibc/nolibc.h preload/trap.h include/rlthrottle.h \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h \
 preload/nolibc/start.h src/trap_abi.h
preload/nolibc/nolibc.h:
preload/trap.h:
include/rlthrottle.h:
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
src/trap_abi.h:
