build-x/trap/preload/nolibc/start.o: preload/nolibc/start.c \
 preload/nolibc/nolibc.h preload/nolibc/start.h preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
preload/nolibc/nolibc.h:
