build-x/trap/src/proc_stat.o: src/proc_stat.c preload/nolibc/nolibc.h \
 src/proc_stat.h
preload/nolibc/nolibc.h:
src/proc_stat.h:
