build-x/trap/src/iov.o: src/iov.c preload/nolibc/nolibc.h src/iov.h
preload/nolibc/nolibc.h:
src/iov.h:
