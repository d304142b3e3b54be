build-x/trap/preload/nolibc/strtol.o: preload/nolibc/strtol.c \
 preload/nolibc/nolibc.h
preload/nolibc/nolibc.h:
