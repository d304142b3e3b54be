build-x/src/hiredis_nolibc.o: src/hiredis_nolibc.c
