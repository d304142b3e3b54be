#!/bin/bash
# A non-blocking receiver driven by epoll is throttled and does not spin (rlthrottle(7) BEHAVIOUR: the process
# does not spin while it waits; PEERS: trickle burns a full core here). CPU per wall second < 0.3.
# fronts: preload seccomp
# matrix-only: seccomp (slow: its seccomp run is in make matrix, to keep make test in budget)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin source pull
n=$((3 * 1048576))
SRC_ARGS="-n $n"
for combo in "recv -N" "read -N -C" "recvmsg -N"; do
	set -- $combo
	m=$1; shift
	label="$m$(echo "$*" | tr -d ' -')"
	RLT_RECV="1MiB/s burst=256KiB" recv_paced "$label" $((n - 262144)) 1048576 1.5 -m "$m" -b 65536 "$@"
	info "$label: EAGAIN seen by the program: $(kv eagain "$P_OUT") in $(kv calls "$P_OUT") calls"
	# an event loop told EAGAIN again and again would be spinning: allow a few per second at most
	assert_le "$label EAGAIN returns" 200 "$(kv eagain "$P_OUT")"
done
