build-x/src/units.o: src/units.c src/units.h include/rlthrottle.h
src/units.h:
include/rlthrottle.h:
