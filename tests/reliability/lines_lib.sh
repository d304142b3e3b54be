# lines_lib.sh: what the tests of threads sharing one stream socket share (sourced after lib.sh):
# T threads x N lines of L bytes (the `lines` helper's), a receiver that takes them apart, and
# the checks of what it got.
need_bin lines
t=4 n=16 l=4000 burst=102400
total=$((t * n * l))

# lines_recv LABEL: a receiver of the lines (`lines recv`), its port in SRV_PORT, its pid in RPID.
lines_recv() {
	start_srv "recv_$1" lines recv -t $t -n $n -l $l -o "$T/$1.bin"
	RPID=$LAST_PID
}

# lines_check LABEL SENDER_OUT WANT: the receiver ends, and it got every line whole and once
# (sha256 of the sorted lines: WANT), at 100KiB/s after the burst.
lines_check() {
	local r=$T/recv_$1.out
	wait_pid "$RPID" 20 || fail "$1: receiver did not finish"
	show "$2" "$r"
	assert_eq "$1: bytes received" $total "$(kv bytes "$r")"
	assert_eq "$1: lines torn" 0 "$(kv torn "$r")"
	assert_eq "$1: lines whole" $((t * n)) "$(kv whole "$r")"
	assert_eq "$1: lines missing, duplicated" "0 0" "$(kv missing "$r") $(kv dups "$r")"
	assert_eq "$1: sha256 of the sorted lines" "$3" "$(sort "$T/$1.bin" | sha256sum | cut -d' ' -f1)"
	MIN_SPAN_S=1 assert_rate "$1: rate after the burst" $((total - burst)) "$(kv elapsed_ns "$r")" 102400 0.75 1.3
}
