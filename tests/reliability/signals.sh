# Helpers of the signal tests (test_signal_*.sh), sourced after lib.sh: a peer that keeps every
# byte it gets in a file (socat), one that serves a file, one that is silent a while, the check
# that two files agree, and a program run under one front or the other.
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

# delivered LABEL IN BYTES: a run of sigio (front_ok LABEL) moved IN exactly: $T/out-LABEL holds
# the same bytes, the calls' return values add up to BYTES, and no handler waited over 100 ms.
delivered() {
	same_bytes "$1" "$2" "$T/out-$1"
	assert_eq "$1: bytes the calls returned" "$3" "$(kv moved "$T/$1.out")"
	assert_le "$1: slowest handler (us)" 100000 "$(kv lat_max_us "$T/$1.out")"
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

# front_ok [-p] LABEL FRONT CMD...: CMD under FRONT (run_front; the RLT_* variables from the
# caller), its output in $T/LABEL.out and $T/LABEL.err, shown; TOOK_S is how long CMD ran. With
# -p, the peer (PEER_PID) must then see the end. Fails unless CMD exited 0.
front_ok() {
	local peer=0 label front rc=0 t0 t1
	[ "$1" = -p ] && { peer=1; shift; }
	label=$1 front=$2; shift 2
	t0=$(now_ns)
	run_front "$front" "$@" >"$T/$label.out" 2>"$T/$label.err" || rc=$?
	t1=$(now_ns)
	TOOK_S=$(calc "($t1 - $t0) / 1e9")
	[ $peer = 1 ] && { wait_pid "$PEER_PID" 10 || fail "$label: the peer did not see the end"; }
	show "$T/$label.out" "$T/$label.err"
	[ $rc -eq 0 ] || fail "$label: $(basename "$1") exited $rc"
}

# idle_peer NAME: a listener on loopback (PEER_PORT) whose one client gets "hello\n" after 0.5 s
# of silence.
idle_peer() {
	PEER_PORT=$(free_port)
	bg "$1" python3 -c '
import socket, sys, time
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1)
c, _ = l.accept(); time.sleep(0.5); c.sendall(b"hello\n"); c.close()' "$PEER_PORT"
	PEER_PID=$LAST_PID
	wait_port "$PEER_PORT"
}
