#!/bin/bash
# RLT_NET's latency on a bulk stream (issue 18; rlthrottle(7) NETWORK CONDITIONS): the data is
# held DUR from its arrival in a delay line of ours, not in the kernel's buffer, so the
# sender's window stays open and a download keeps its throughput: a 20 MiB curl download under
# latency=50ms takes about 2 x 50 ms more than without (the connect, then the first byte), not
# 50 ms per receive buffer (it took 2-11 s before the line). Every byte equal; the same for
# readers that block, and for event loops on epoll, poll, select and asyncio; and with a
# receive rate, both apply without a spin.
# fronts: preload seccomp
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd curl python3
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g $((20 * 1048576)) >"$T/www/f.bin"
port=$(free_port)
bg http python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$port"
wait_port "$port"

# curl's time, in ms: plain, then under latency=50ms (the launcher's --net on --seccomp)
fetch() {
	local t0 t1
	t0=$(now_ns)
	"$@" curl -sS -o "$T/got.bin" "http://127.0.0.1:$port/f.bin" 2>"$T/curl.err" ||
		{ show "$T/curl.err"; fail "curl failed"; }
	t1=$(now_ns)
	sha256_eq "$T/www/f.bin" "$T/got.bin" >&2
	echo $(((t1 - t0) / 1000000))
}
fetch env >/dev/null # the file in the page cache, python's server warm
plain=$(fetch env)
if [ "$(front)" = seccomp ]; then
	lat=$(fetch "$(dirname "$RLT_LIB")/rlthrottle" --seccomp --net latency=50ms --)
else
	lat=$(RLT_NET="latency=50ms" fetch throttled)
fi
info "20 MiB: plain $plain ms, latency=50ms $lat ms"
assert_ge "curl under latency=50ms (ms): the connect and the first byte each 50 ms later" 99 "$lat"
assert_le "curl under latency=50ms, over plain (ms)" 1000 $((lat - plain))

# with a receive rate too: both apply, and the line's due data is reported only when the
# budget allows it (a non-blocking reader told "readable" and refused by its budget spun: a
# core's worth of CPU for the 2 s)
head -c $((3 * 1048576)) "$T/www/f.bin" >"$T/www/g.bin"
throttled_prefix
RLT_NET="latency=50ms" RLT_RECV="1MiB/s" python3 -c '
import resource, subprocess, sys, time
t = time.monotonic(); subprocess.run(sys.argv[1:], check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("ms=%d cpu_ms=%d" % ((time.monotonic() - t) * 1000, (r.ru_utime + r.ru_stime) * 1000))' \
	"${THROTTLED_PREFIX[@]}" curl -sS -o "$T/g.got" "http://127.0.0.1:$port/g.bin" >"$T/rate.out" 2>"$T/rate.err" ||
	{ show "$T/rate.err"; fail "curl under latency and a rate failed"; }
sha256_eq "$T/www/g.bin" "$T/g.got"
info "3 MiB under latency=50ms and RLT_RECV=1MiB/s: $(cat "$T/rate.out")"
assert_range "latency and rate: time (ms; 2 MiB past the burst at 1 MiB/s)" 1500 4000 "$(kv ms "$T/rate.out")"
assert_le "latency and rate: CPU (ms)" 500 "$(kv cpu_ms "$T/rate.out")"

# other readers: 8 MiB each, every byte, within 3 s (about 1 s a reader before the line)
"$ITEST_BIN/fnv" -g $((8 * 1048576)) >"$T/blob"
bg bulk python3 "$ITEST_DIR/net_bulk.py" serve "$T/blob" "$T/bport"
wait_file "$T/bport" 10
for how in block epoll poll select asyncio; do
	RLT_NET="latency=50ms" throttled python3 "$ITEST_DIR/net_bulk.py" read $how "$(cat "$T/bport")" "$T/$how.got" >"$T/$how.out" 2>"$T/$how.err" ||
		{ show "$T/$how.err"; fail "$how: the download failed"; }
	sha256_eq "$T/blob" "$T/$how.got"
	assert_range "$how: 8 MiB under latency=50ms (ms)" 99 3000 "$(kv ms "$T/$how.out")"
done
exit 0
