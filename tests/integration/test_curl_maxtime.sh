#!/bin/bash
# A program's own deadline holds (issue 17 row 14): `curl --max-time N` on a 20 MiB download
# under RLT_RECV=1MiB/s (default burst) ends near N seconds with curl's own timeout (exit 28).
# Before, curl's poll reported data the budget did not allow yet and the receive after it slept
# for the budget: --max-time 1 ended at 1.5-2.0 s, --max-time 2 at 2.3-2.9 s. Now the poll
# holds the socket back until its budget allows the receive, and returns by curl's timeout.
# Generous bound: N + 0.5 s.
# fronts: preload seccomp
# parallel-safe: bound, no rate (curl's own --max-time N holds: it ends by N + 0.5 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd curl python3
mkdir -p "$T/www"
head -c $((20 * 1048576)) /dev/zero >"$T/www/f.bin"
http_dir http "$T/www"
port=$HTTP_PORT
# under the system-call front curl is dynamic: the launcher's --seccomp is asked for explicitly
throttled_prefix
for n in 1 2; do
	rc=0
	t0=$(now_ns)
	RLT_RECV="1MiB/s" "${THROTTLED_PREFIX[@]}" curl -sS -o /dev/null --max-time "$n" \
		"http://127.0.0.1:$port/f.bin" 2>"$T/curl$n.err" || rc=$?
	t1=$(now_ns)
	info "curl --max-time $n: $(cat "$T/curl$n.err")"
	assert_eq "curl --max-time $n exit status (its own timeout)" 28 "$rc"
	took=$(calc "($t1 - $t0) / 1e9")
	fle "$took" "$(calc "$n + 0.5")" || fail "curl --max-time $n ended after $took s (limit $n + 0.5 s)"
	info "curl --max-time $n ended after $took s (ok: <= $n + 0.5)"
done
