#!/bin/bash
# Issue 17 row 11: trying a limit with action=dry-run and then enforcing it never freezes the
# program: 16 MiB sent under "1MiB/s action=dry-run" (about 15 s ahead of the rate), then set to
# action=delay: the next 1 KiB send goes within 1 s (before: it waited 13.96 s, the dry-run's
# lag carried into the enforced budget). sha256.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/set_lib.sh"
need_lib
need_cmd python3 sha256sum
head -c $((17 * MiB)) /dev/urandom >"$T/f.bin"
RLT_SEND="1MiB/s action=dry-run" bg srv throttled python3 "$P" serve "$T/port" "$T/f.bin" \
	$((16 * MiB)) "$T/go"
wait_file "$T/port"
bg cli python3 "$P" fetch "$(cat "$T/port")" "$T/got.bin" "$T/samples"
CLI=$LAST_PID
SENDER=$(cat "$T/port.pid")
wait_file "$T/port.held" 20
set_send 1 "1MiB/s action=delay"
info "set: $(cat "$T/set1.out")"
sleep 0.2
t1=$(now_ns)
touch "$T/go"
finish_download
t2=$(python3 "$P" after "$((t1 + 1))" "$T/samples")
[ "$t2" != 0 ] || fail "nothing arrived after the go"
# the first bytes after the go may be ones the socket held: the last 16 KiB sent must be in
# after the go too, at 1MiB/s within a second and a half
tl=$(tail -1 "$T/samples" | cut -d' ' -f1)
info "after enforcing: first bytes $(( (t2 - t1) / 1000000 )) ms, the last 1 MiB in $(( (tl - t1) / 1000000 )) ms"
assert_le "first bytes after enforcing (ms)" 1000 $(( (t2 - t1) / 1000000 ))
assert_le "the last MiB after enforcing (ms)" 2500 $(( (tl - t1) / 1000000 ))
