build-x/tests/test_rule_parse: tests/unit/test_rule_parse.c \
 include/rlthrottle.h tests/unit/testutil.h
include/rlthrottle.h:
tests/unit/testutil.h:
