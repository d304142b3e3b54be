build-x/trap/preload/nolibc/byteorder.o: preload/nolibc/byteorder.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
