#!/bin/bash
# Issue 9: sendfile of 1 MB throttled into pieces while a signal arrives every 2 ms (handler
# writes to /dev/null, no SA_RESTART), with an offset and on the file's own position. Before:
# under --seccomp the peer got 1.52 MB for 1 MB, and the return values did not add up to the
# file position. Now: bytes exact (sha256), and after each call the offset (or the file
# position) is the sum of what the calls returned. Both fronts.
# parallel-safe: bound, no rate (each handler runs within 100 ms; bytes and offsets exact)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/signals.sh"
need_bin sigio

random_file "$T/in" 1000000
for front in seccomp preload; do
	for how in sendfile sendfilepos; do
		label="$front-$how"
		sink_to "sink-$label" "$T/out-$label"
		RLT_SEND="1MiB/s burst=64KiB" front_ok -p "$label" $front "$ITEST_BIN/sigio" \
			-p "$PEER_PORT" -m $how -f "$T/in" -i 2000 -T 15
		delivered "$label" "$T/in" 1000000
		assert_eq "$label: offsets agree with the counts" 1 "$(kv offset_ok "$T/$label.out")"
	done
done
