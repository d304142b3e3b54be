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
set_during_download "1MiB/s" 7 2 "2MiB/s" 1
moved=$PER_S
info "first second after raising to 2MiB/s: $moved B"
assert_le "bytes in the first second after the raise" $((MiB * 23 / 10)) "$moved"
assert_ge "bytes in the first second after the raise" $((MiB * 14 / 10)) "$moved"
