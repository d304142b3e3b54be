build-x/trap/preload/nolibc/malloc.o: preload/nolibc/malloc.c \
 preload/nolibc/nolibc.h preload/nolibc/rawsys.h preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
preload/nolibc/rawsys.h:
preload/nolibc/nolibc.h:
