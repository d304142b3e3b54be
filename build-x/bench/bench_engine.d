build-x/bench/bench_engine: tests/bench/bench_engine.c \
 include/rlthrottle.h
include/rlthrottle.h:
