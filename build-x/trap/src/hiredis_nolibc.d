build-x/trap/src/hiredis_nolibc.o: src/hiredis_nolibc.c \
 preload/nolibc/nolibc.h src/hiredis_dl.h include/rlthrottle.h
preload/nolibc/nolibc.h:
src/hiredis_dl.h:
include/rlthrottle.h:
