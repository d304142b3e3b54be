#!/bin/bash
# Under --seccomp the waits and epoll_ctl trap only once a wait could hold a socket
# (docs/design/readiness.md): a receive rule that never binds leaves them untrapped (an event
# loop would pay a signal per wait for nothing: redis-benchmark's ping, 8 a request, not 1);
# the first shortage traps them, and a connect rule or RLT_NET does from the start. Seen as
# the number of seccomp filters the program has at its end (epollwake prints it): the waits'
# filter is one more. The same program each time, every run's rules trapping the same classes.
# fronts: seccomp (when the waits' filter is stacked is the system-call front's)
# parallel-safe: counts only (the filters a process has at its end)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin epollwake
run() { # NAME SECONDS [VAR=VALUE...]: epollwake under the rules, its filters
	local name=$1 s=$2
	shift 2
	env "$@" "${THROTTLED_PREFIX[@]}" "$ITEST_BIN/epollwake" -t 100 -s "$s" \
		>"$T/$name.out" 2>"$T/$name.err" || { show "$T/$name.err"; fail "$name: epollwake failed"; }
	info "$name: $(cat "$T/$name.out")" >&2
	kv seccomp_filters "$T/$name.out"
}
throttled_prefix
cheap=$(run never 0.3 RLT_RECV="100GiB/s")
[ "${cheap:--1}" -ge 1 ] || skip "the kernel does not count a process's seccomp filters"
short=$(run short 0.5 RLT_RECV="2KiB/s burst=1KiB")
conn=$(run connect 0.3 RLT_RECV="100GiB/s" RLT_CONNECT="100000/s")
net=$(run net 0.3 RLT_RECV="100GiB/s" RLT_NET="connect=refuse port=1")
assert_eq "filters when a budget was short (the waits' one more than with none short)" \
	"$((cheap + 1))" "$short"
assert_eq "filters with a connect rule that never binds (the waits' from the start)" \
	"$((cheap + 1))" "$conn"
assert_eq "filters with RLT_NET (the waits' from the start)" "$((cheap + 1))" "$net"
exit 0
