build-x/src/hiredis_dl.o: src/hiredis_dl.c src/hiredis_dl.h \
 include/rlthrottle.h
src/hiredis_dl.h:
include/rlthrottle.h:
