build-x/trap/preload/nolibc/errstr.o: preload/nolibc/errstr.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
