build-x/trap/preload/nolibc/clock.o: preload/nolibc/clock.c \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h \
 preload/nolibc/start.h
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
