# set_lib.sh: what the `rlthrottle set` tests share (sourced after lib.sh): the launcher, the
# phase-rate helper (rate_phases.py), and a download from a throttled python sender to a
# receiver that samples its progress.
RLT=$(dirname "$RLT_LIB")/rlthrottle
P=$ITEST_DIR/rate_phases.py
KiB=1024 MiB=1048576

# start_download RULE MIB: MIB MiB of random bytes ($T/f.bin) sent under RLT_SEND=RULE (through
# `throttled`: the front of this run) to a receiver writing $T/got.bin and $T/samples. Returns
# once the first bytes arrived; sets CLI (the receiver's pid) and SENDER (the sender's own pid).
start_download() {
	head -c $(($2 * MiB)) /dev/urandom >"$T/f.bin"
	RLT_SEND="$1" bg srv throttled python3 "$P" serve "$T/port" "$T/f.bin"
	wait_file "$T/port"
	bg cli python3 "$P" fetch "$(cat "$T/port")" "$T/got.bin" "$T/samples"
	CLI=$LAST_PID
	SENDER=$(cat "$T/port.pid")
	wait_file "$T/samples.first"
}

# set_send N RULE: `rlthrottle set SENDER RLT_SEND RULE`, which must succeed ($T/setN.out).
set_send() {
	"$RLT" set "$SENDER" RLT_SEND "$2" >"$T/set$1.out" 2>&1 ||
		{ show "$T/set$1.out"; fail "set to $2 failed"; }
}

# finish_download: the receiver ends within 20 s and every byte arrived.
finish_download() {
	wait_pid "$CLI" 20 || fail "the receiver did not finish"
	[ "$(sha256sum <"$T/f.bin")" = "$(sha256sum <"$T/got.bin")" ] || fail "bytes differ (sha256)"
}

# set_during_download FROM MIB WARM TO SPAN: start_download FROM MIB; WARM s in, set to TO; SPAN s
# after the set, to 100MiB/s, and the download finishes. Sets T1 (the set), T2 (SPAN s after)
# and PER_S, the bytes per second that arrived between them.
set_during_download() {
	start_download "$1" "$2"
	sleep "$3"
	T1=$(now_ns)
	set_send 1 "$4"
	info "set: $(cat "$T/set1.out")"
	sleep "$(calc "$5 + 0.2")"
	T2=$((T1 + $5 * 1000000000))
	set_send 2 "100MiB/s"
	finish_download
	PER_S=$(python3 "$P" total "$T1" "$T2" "$T/samples")
}

# assert_phases LO R1 R2 R3: three phases, 1MiB/s -> 256KiB/s -> 1MiB/s, set at t1 (applied by
# t1b) and at t2 (applied by t2b), the last ending at t3; each measured from `margin` ns after
# its set. Phases 2 and 3 lasted 2 s at least, and their rates R1, R2, R3 are within LO% to 105%
# of their limits.
assert_phases() {
	info "phase rates (B/s): 1MiB/s -> $2, 256KiB/s -> $3, 1MiB/s -> $4"
	assert_ge "phase 2 length (ns)" 2000000000 $((t2 - t1b - margin))
	assert_ge "phase 3 length (ns)" 2000000000 $((t3 - t2b - margin))
	assert_range "phase 1 rate" $((MiB * $1 / 100)) $((MiB * 105 / 100)) "$2"
	assert_range "phase 2 rate" $((256 * KiB * $1 / 100)) $((256 * KiB * 105 / 100)) "$3"
	assert_range "phase 3 rate" $((MiB * $1 / 100)) $((MiB * 105 / 100)) "$4"
}
