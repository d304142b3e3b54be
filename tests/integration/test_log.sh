#!/bin/bash
# rlthrottle(7) RULES RLT_LOG: at debug level the library says something, and every line it writes to stderr
# starts with "rlthrottle[PID]:" (the program's pid). At error level a good run prints nothing.
# fronts: preload seccomp
# parallel-safe
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
RLT_LOG=debug RLT_SEND="10MB/s" do_send dbg -n 100000
pid=$(kv pid "$B_OUT")
err=$T/blast_dbg.err
[ -s "$err" ] || fail "RLT_LOG=debug printed nothing"
info "debug output: $(wc -l <"$err") lines, first: $(head -n 1 "$err")"
bad=$(grep -v "^rlthrottle\[$pid\]: " "$err" | head -n 3)
[ -z "$bad" ] || fail "stderr lines not starting with 'rlthrottle[$pid]: ': $bad"
RLT_LOG=error RLT_SEND="10MB/s" do_send err -n 100000
assert_eq "stderr at RLT_LOG=error" "" "$(cat "$T/blast_err.err")"
