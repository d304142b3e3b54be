#!/bin/bash
# rlthrottle(7) RULES/§4: every receive entry point is throttled: read, recv, recvfrom, recvmsg, recvmmsg,
# readv, and splice from the socket into a pipe; MSG_WAITALL is honoured (full buffers). 2.5 MiB
# at 2 MiB/s, burst 512 KiB; bytes exact.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix-rest, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source pull
n=$((5 * 524288))
SRC_ARGS="-n $n"
how=$(front)
for combo in read recv recvfrom recvmsg recvmmsg readv splice "recv -W" "recvmsg -W" "recvfrom -W -C"; do
	set -- $combo
	m=$1; shift
	label="$how-$m$(echo "$*" | tr -d ' -')"
	# waiting for the budget must not spin (rlthrottle(7) BEHAVIOUR): recv_paced's CPU check
	RLT_RECV="2MiB/s burst=512KiB" recv_paced "$label" $((n - 524288)) 2097152 0.7 -m "$m" -b 65536 "$@"
	case " $* " in *" -W "*) assert_eq "$label: short MSG_WAITALL returns" 0 "$(kv short "$P_OUT")" ;; esac
done
