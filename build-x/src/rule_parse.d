build-x/src/rule_parse.o: src/rule_parse.c include/rlthrottle.h \
 src/units.h
include/rlthrottle.h:
src/units.h:
