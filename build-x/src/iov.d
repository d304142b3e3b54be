build-x/src/iov.o: src/iov.c src/iov.h
src/iov.h:
