build-x/tests/test_inject_blob: tests/unit/test_inject_blob.c \
 tests/unit/testutil.h launcher/inject.h src/inject_proto.h
tests/unit/testutil.h:
launcher/inject.h:
src/inject_proto.h:
