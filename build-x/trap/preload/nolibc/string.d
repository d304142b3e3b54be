build-x/trap/preload/nolibc/string.o: preload/nolibc/string.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
