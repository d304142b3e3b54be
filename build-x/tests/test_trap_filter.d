build-x/tests/test_trap_filter: tests/unit/test_trap_filter.c \
 src/trap_abi.h launcher/trap_filter.h src/error.h include/rlthrottle.h
src/trap_abi.h:
launcher/trap_filter.h:
src/error.h:
include/rlthrottle.h:
