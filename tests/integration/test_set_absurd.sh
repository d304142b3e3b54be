#!/bin/bash
# Issue 17 row 7 (second part): a rate set absurdly low and then raised does not leave the
# sender's go time where the low rate put it: 1MiB/s burst=4KiB, set to 1B/1000h burst=1B, 1 s
# later to 100MiB/s: the rest of the 6 MiB arrives within 3 s of the raise (before: 0 bytes in
# 3 s, the sender's go time 62 days away: a saturated time carried into units). sha256.
# fronts: preload seccomp
# parallel-safe: bound, no rate (the rest arrives within 3 s of the raise; it needs 0.06 s)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
start_download "1MiB/s burst=4KiB" 6
sleep 1
set_send 1 "1B/1000h burst=1B"
sleep 1
t1=$(now_ns)
set_send 2 "100MiB/s"
info "set: $(cat "$T/set2.out")"
wait_pid "$CLI" 3 || fail "the download did not end within 3 s of raising the rate to 100MiB/s"
t2=$(tail -1 "$T/samples" | cut -d' ' -f1)
info "the download ended $(( (t2 - t1) / 1000000 )) ms after the raise"
finish_download
