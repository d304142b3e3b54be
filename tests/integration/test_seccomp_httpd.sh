#!/bin/bash
# --seccomp on a static server that sends files with sendfile: busybox httpd (busybox-static)
# serves a 4 MB file under -u 1MiB/s. It asks for the whole file in one sendfile call, with a
# count of 2^63: the handler makes that call for it piece by piece, as the preload's hook
# does, and moves its offset on. The call succeeds (nothing rejected: busybox would fall back to
# read and write on an error, a Go server would drop the connection), the bytes arrive exactly,
# they are paced from the first second (not held back, then sent at once), and the rate after
# the burst is the rule's.
# fronts: seccomp (busybox-static: a static program the preload cannot enter)
. "$(dirname "$0")/lib.sh"
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd busybox curl sha256sum

mkdir -p "$T/www"
head -c 4000000 /dev/urandom >"$T/www/f.bin"
port=$(free_port)
bg httpd "$RLTHROTTLE" --seccomp -u 1MiB/s --stats "$T/st.%p.json" -- busybox httpd -f -p "127.0.0.1:$port" -h "$T/www"
hpid=$LAST_PID
wait_port "$port"

out=$(curl -s -o "$T/out.bin" -w '%{time_starttransfer} %{time_total}' "http://127.0.0.1:$port/f.bin") ||
	fail "curl from busybox httpd under --seccomp failed"
sha256_eq "$T/www/f.bin" "$T/out.bin"
set -- $out
assert_le "seconds to the first byte" 0.5 "$1"
# 1 MiB/s with a 1 MiB burst: (4000000 - 1048576) / 1048576 = 2.8 s
MIN_SPAN_S=2 assert_rate "download after the burst" "$((4000000 - 1048576))" "$(calc "$2 * 1e9")" 1048576 0.8 1.1
kill -TERM "$hpid" # the launcher passes it on; busybox httpd ends on it (status 143)
wait_pid "$hpid" 10
[ $? -ne 124 ] || fail "busybox httpd did not stop"
show "$T"/st.*.json
# a summary per process (%p): httpd's, and the child it forks for the connection
sum_field() { cat "$T"/st.*.json | grep -o "\"$1\":[0-9]*" | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'; }
assert_eq "sends rejected" 0 "$(sum_field rejected)"
units=$(sum_field units)
assert_range "bytes charged (the file and the HTTP header)" 4000000 4002000 "$units"
