build-x/trap/preload/nolibc/inet.o: preload/nolibc/inet.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
