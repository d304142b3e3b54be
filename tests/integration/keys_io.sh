# keys_io.sh: what test_keys_send and test_keys_recv share (sourced after lib.sh): their python
# peers (keys_io.py), the 3 MiB file ($T/file) each peer moves, and the check of one peer's rate.
need_cmd python3
IO=$ITEST_DIR/keys_io.py
MIB=1048576
head -c $((3 * MIB)) /dev/urandom >"$T/file"

# keyed_rate WHAT LINE SENT GOT RATE: one peer of a key=peer rule of RATE/s (its burst one
# second of RATE): GOT holds SENT's bytes (sha256), and the bytes of LINE (bytes= span_ns=) past
# the burst came at RATE/s (+-15%, over at least 1.6 s). Adds that rate to KEYED_SUM.
keyed_rate() {
	local bytes span
	sha256_eq "$3" "$4"
	bytes=$(kv bytes "$2"); span=$(kv span_ns "$2")
	MIN_SPAN_S=1.6 assert_rate "$1" $((bytes - $5)) "$span" "$5" 0.85 1.15
	KEYED_SUM=$(calc "${KEYED_SUM:-0} + ($bytes - $5) * 1e9 / $span")
}
