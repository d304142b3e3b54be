#!/bin/bash
# close() must not fail with EINTR under --seccomp: a close that waited interruptibly for the
# throttle returned EINTR to a signal with the fd still open (Linux closes it whatever close
# returns: programs leak it; Python raised InterruptedError from socket.close()). A C program (SIGUSR1 to
# its looping thread every 100 us, no SA_RESTART) and python3 (SIGALRM every 1 ms) each
# connect and close loopback sockets under RLT_CONNECT and RLT_CONNS; plain and preloaded
# runs are the reference (0).
# Also: the slots of the closed connections come free (1000 of them, 2 threads looping).
# parallel-safe: counts only (no EINTR from close; iterations and signals over their minima, which a quiet run passes 3-20 times)
. "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin closeintr
need_cmd python3
PY=$(dirname "$0")/sigclose.py
RLTHROTTLE=$(dirname "$RLT_LIB")/rlthrottle
export RLT_CONNECT="100000/s" RLT_CONNS=1000

for front in plain preload seccomp; do
	case $front in
	plain) run=(env -u RLT_CONNECT -u RLT_CONNS) ;;
	preload) run=(env LD_PRELOAD="$RLT_LIB") ;;
	seccomp) run=("$RLTHROTTLE" --seccomp --) ;;
	esac
	timeout -k 2 20 "${run[@]}" "$ITEST_BIN/closeintr" -n 20000 -D 1.5 -t 2 loop \
		>"$T/c_$front.out" 2>"$T/c_$front.err" || { show "$T/c_$front.out" "$T/c_$front.err"; fail "$front: closeintr failed"; }
	out=$(cat "$T/c_$front.out")
	info "$front C: $out"
	assert_ge "$front: iterations" 1000 "$(kv iterations "$out")"
	assert_ge "$front: signals" 100 "$(kv signals "$out")"
	assert_eq "$front: close() failed with EINTR" 0 "$(kv close_eintr "$out")"
	assert_eq "$front: fd still open after close()" 0 "$(kv still_open "$out")"
	[ $front = plain ] && continue
	timeout -k 2 20 "${run[@]}" python3 "$PY" 2000 1.5 \
		>"$T/p_$front.out" 2>"$T/p_$front.err" || { show "$T/p_$front.out" "$T/p_$front.err"; fail "$front: sigclose.py failed"; }
	out=$(cat "$T/p_$front.out")
	info "$front python3: $out"
	assert_ge "$front: python3 handlers run" 50 "$(kv handlers "$out")"
	assert_eq "$front: socket.close() raised InterruptedError" 0 "$(kv close_interrupted "$out")"
done
