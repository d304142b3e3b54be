build-x/bench/bench_charge: tests/bench/bench_charge.c src/clock.h \
 include/rlthrottle.h src/policy.h src/publish.h src/policy.h
src/clock.h:
include/rlthrottle.h:
src/policy.h:
src/publish.h:
src/policy.h:
