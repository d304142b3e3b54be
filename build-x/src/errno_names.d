build-x/src/errno_names.o: src/errno_names.c include/rlthrottle.h
include/rlthrottle.h:
