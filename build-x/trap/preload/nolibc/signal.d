build-x/trap/preload/nolibc/signal.o: preload/nolibc/signal.c \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
