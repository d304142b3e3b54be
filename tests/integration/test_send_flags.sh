#!/bin/bash
# Sockets made with SOCK_NONBLOCK and/or SOCK_CLOEXEC are throttled like any other (trickle's
# blind spot). Non-blocking senders poll() for POLLOUT and must not spin: CPU per second < 0.3.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast
n=$((5 * 524288))
for combo in "write -N" "send -C" "sendmsg -N" "sendmmsg -C" "writev -N -C" "sendfile -N" "send -N -C"; do
	set -- $combo
	m=$1; shift
	label="$m$(echo "$*" | tr -d ' -')"
	RLT_SEND="2MiB/s burst=512KiB" do_send "$label" -n $n -s 32768 -m "$m" "$@"
	MIN_SPAN_S=0.7 assert_rate "$label" $((n - 524288)) "$(kv elapsed_ns "$S_OUT")" 2097152 0.7 1.3
	case " $* " in *" -N "*)
		assert_cpu "$label sender" "$(kv cpu_ns "$B_OUT")" "$(kv elapsed_ns "$B_OUT")" 0.3
		info "$label: EAGAIN seen by the program: $(kv eagain "$B_OUT") in $(kv calls "$B_OUT") calls" ;;
	esac
done
