#!/bin/bash
# RLT_NET's latency on a bulk stream (issue 18; rlthrottle(7) NETWORK CONDITIONS): the data is
# held DUR from its arrival in a delay line of ours, not in the kernel's buffer, so the
# sender's window stays open and a download keeps its throughput: a 20 MiB curl download under
# latency=50ms takes about 2 x 50 ms more than without (the connect, then the first byte), not
# 50 ms per receive buffer (it took 2-11 s before the line). Every byte equal; the same for
# readers that block, and for event loops on epoll, poll, select and asyncio.
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
