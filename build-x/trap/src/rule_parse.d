build-x/trap/src/rule_parse.o: src/rule_parse.c preload/nolibc/nolibc.h \
 include/rlthrottle.h src/units.h
preload/nolibc/nolibc.h:
include/rlthrottle.h:
src/units.h:
