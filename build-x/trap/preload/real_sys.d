build-x/trap/preload/real_sys.o: preload/real_sys.c \
 preload/nolibc/nolibc.h preload/preload.h src/policy.h \
 include/rlthrottle.h src/settings.h preload/nolibc/rawsys.h \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
preload/preload.h:
src/policy.h:
include/rlthrottle.h:
src/settings.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
