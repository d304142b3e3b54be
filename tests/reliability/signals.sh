# Helpers of the signal tests (test_signal_*.sh), sourced after lib.sh: a peer that keeps every
# byte it gets in a file (socat), one that serves a file, and the check that two files agree.
# Each function records the peer's pid with bg, so the EXIT trap stops it.

RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
[ -x "$RLTHROTTLE" ] || fail "launcher not built: $RLTHROTTLE"
need_cmd socat python3 sha256sum

# sink_to NAME FILE: a listener on loopback writing what it receives to FILE; sets PEER_PORT,
# PEER_PID.
sink_to() {
	PEER_PORT=$(free_port)
	bg "$1" socat -u "TCP-LISTEN:$PEER_PORT,bind=127.0.0.1,reuseaddr" "OPEN:$2,creat,trunc"
	PEER_PID=$LAST_PID
	wait_port "$PEER_PORT"
}

# serve_file NAME FILE: a listener on loopback that sends FILE to the first client, then closes.
serve_file() {
	PEER_PORT=$(free_port)
	bg "$1" socat -u "OPEN:$2" "TCP-LISTEN:$PEER_PORT,bind=127.0.0.1,reuseaddr"
	PEER_PID=$LAST_PID
	wait_port "$PEER_PORT"
}

# random_file FILE BYTES
random_file() { head -c "$2" /dev/urandom >"$1"; }

# same_bytes WHAT A B: A and B have the same length and sha256.
same_bytes() {
	local a b
	a=$(sha256sum <"$2" | cut -d' ' -f1)
	b=$(sha256sum <"$3" | cut -d' ' -f1)
	[ "$a" = "$b" ] || fail "$1: sha256 differs: sent $(stat -c %s "$2") bytes ($a), received $(stat -c %s "$3") ($b)"
	info "$1: $(stat -c %s "$3") bytes exact (sha256 $a)"
}

# run_front FRONT CMD...: CMD under --seccomp (FRONT=seccomp) or the preload (FRONT=preload),
# the RLT_* variables from the caller; bounded by timeout 20.
run_front() {
	local front=$1; shift
	if [ "$front" = seccomp ]; then
		timeout -k 2 20 "$RLTHROTTLE" --seccomp -- "$@"
	else
		timeout -k 2 20 env LD_PRELOAD="$RLT_LIB" "$@"
	fi
}
