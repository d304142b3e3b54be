#!/bin/bash
# Issue 17 row 15: `rlthrottle set` raising a rate never lets more than the new burst through
# at once (rlthrottle(1) COMMANDS): a sender at 1MiB/s (default burst, empty while sending) set to 2MiB/s
# sends about 2 MiB in the next second, at most 2.3 MiB (before: 2.93 MiB, the old bucket's
# emptiness counted in units against a burst twice its size). sha256.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
start_download "1MiB/s" 7
sleep 2
t1=$(now_ns)
set_send 1 "2MiB/s"
info "set: $(cat "$T/set1.out")"
sleep 1.3
t2=$((t1 + 1000000000))
set_send 2 "100MiB/s"
finish_download
moved=$(python3 "$P" total "$t1" "$t2" "$T/samples")
info "first second after raising to 2MiB/s: $moved B"
assert_le "bytes in the first second after the raise" $((MiB * 23 / 10)) "$moved"
assert_ge "bytes in the first second after the raise" $((MiB * 14 / 10)) "$moved"
