build-x/trap/preload/nolibc/format.o: preload/nolibc/format.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
