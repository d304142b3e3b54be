build-x/src/proc_stat.o: src/proc_stat.c src/proc_stat.h
src/proc_stat.h:
