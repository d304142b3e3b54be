#!/bin/bash
# fronts: preload seccomp
# Issue 11, SPEC §3 action=dry-run: curl downloads 4 MiB from a local HTTP server under
# RLT_RECV="100KiB/s action=dry-run". It runs at full speed (no delay: well under the 41 s the
# rate would take), every byte arrives, and its RLT_STATS report the delay that delay would have
# added (within 10% of size/rate - elapsed) and the receives reject would have refused.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 curl sha256sum
mkdir -p "$T/www"
head -c 4194304 /dev/urandom >"$T/www/blob"
port=$(free_port)
bg http python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/www"
wait_port "$port" 10
out=$(RLT_RECV="100KiB/s action=dry-run" RLT_STATS="$T/stats.json" throttled \
	curl -sS -o "$T/got" -w '%{time_total} %{size_download}' "http://127.0.0.1:$port/blob") ||
	fail "curl failed: $out"
read -r elapsed size <<<"$out"
info "curl: $size bytes in $elapsed s"
assert_eq "every byte arrived" "$(sha256sum <"$T/www/blob" | cut -d' ' -f1)" "$(sha256sum <"$T/got" | cut -d' ' -f1)"
assert_le "elapsed at full speed (100KiB/s would take 41 s)" 3 "$elapsed"
st=$(tr -d '\n' <"$T/stats.json")
info "stats: $st"
would=$(sed 's/.*"delay_ns_total":\([0-9]*\).*/\1/' <<<"$st")
expect=$(calc "($size / 102400 - $elapsed) * 1e9")
info "delay would have added $(calc "$would / 1e9") s; size/rate - elapsed = $(calc "$expect / 1e9") s"
assert_range "delay that delay would have added (ns)" "$(calc "0.9 * $expect")" "$(calc "1.1 * $expect")" "$would"
rej=$(sed 's/.*"rejected":\([0-9]*\).*/\1/' <<<"$st")
calls=$(sed 's/.*"calls":\([0-9]*\).*/\1/' <<<"$st")
assert_ge "receives reject would have refused (all but the first second's)" 1 "$rej"
assert_le "... never more than the receives" "$calls" "$rej"
