build-x/tests/test_iov: tests/unit/test_iov.c tests/unit/testutil.h \
 src/iov.h
tests/unit/testutil.h:
src/iov.h:
