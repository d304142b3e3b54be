build-x/src/settings.o: src/settings.c src/settings.h \
 include/rlthrottle.h
src/settings.h:
include/rlthrottle.h:
