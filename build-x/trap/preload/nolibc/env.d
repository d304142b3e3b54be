build-x/trap/preload/nolibc/env.o: preload/nolibc/env.c \
 preload/nolibc/nolibc.h preload/nolibc/start.h preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
preload/nolibc/start.h:
preload/nolibc/nolibc.h:
