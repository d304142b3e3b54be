build-x/tests/test_keytab: tests/unit/test_keytab.c src/keytab.h \
 src/policy.h include/rlthrottle.h tests/unit/testutil.h
src/keytab.h:
src/policy.h:
include/rlthrottle.h:
tests/unit/testutil.h:
