#!/bin/bash
# rlthrottle(7) BEHAVIOUR: reads and writes on files, pipes and /dev/null are not throttled by RLT_SEND/RLT_RECV,
# even with family=all: 20 MB through each at a 1 kB/s rule takes well under 3 s.
# fronts: preload seccomp
# parallel-safe: bound, no rate (20 MB through files and pipes within 3 s: not throttled)
. "$(dirname "$0")/lib.sh"
need_lib
export RLT_SEND="1kB/s family=all" RLT_RECV="1kB/s family=all"
t0=$(now_ns)
throttled dd if=/dev/zero of=/dev/null bs=64k count=320 2>/dev/null || fail "dd failed"
assert_fast "dd /dev/zero -> /dev/null" $(( $(now_ns) - t0 )) 3
t0=$(now_ns)
throttled sh -c 'dd if=/dev/zero bs=64k count=320 2>/dev/null | dd of=/dev/null bs=64k 2>/dev/null' || fail "pipe failed"
assert_fast "dd through a pipe" $(( $(now_ns) - t0 )) 3
t0=$(now_ns)
throttled dd if=/dev/zero of="$T/file" bs=64k count=320 2>/dev/null || fail "dd to a file failed"
throttled sh -c "cat '$T/file' | wc -c" >"$T/n" || fail "cat failed"
assert_fast "file write + read + pipe" $(( $(now_ns) - t0 )) 3
assert_eq "bytes through the file and pipe" 20971520 "$(tr -d ' ' <"$T/n")"
t0=$(now_ns)
throttled python3 -c '
import os
r, w = os.pipe()
for i in range(2000):
    os.write(w, b"x" * 8192); os.read(r, 8192)
' || fail "python pipe failed"
assert_fast "python pipe write/read" $(( $(now_ns) - t0 )) 3
