#!/bin/bash
# scope=shared:NAME and scope=redis://... are not implemented yet: a clear "not yet supported"
# error, status 125, before main. (This test changes when those scopes land.)
. "$(dirname "$0")/lib.sh"
need_lib
for scope in "shared:x" "redis://127.0.0.1:6379/x"; do
	for var in RLT_SEND RLT_CONNECT; do
		case $var in RLT_SEND) r="1MiB/s scope=$scope" ;; *) r="10/s scope=$scope" ;; esac
		rc=0
		env LD_PRELOAD="$RLT_LIB" "$var=$r" sh -c 'echo RAN' >"$T/out" 2>"$T/err" || rc=$?
		err=$(cat "$T/err")
		[ "$rc" = 125 ] || fail "$var=\"$r\": status $rc, expected 125 (stderr: $err)"
		[ -s "$T/out" ] && fail "$var=\"$r\": the program ran"
		assert_match "$var=\"$r\" message" '^rlthrottle:' "$err"
		assert_match "$var=\"$r\" says not supported" '[Nn]ot (yet )?supported|[Uu]nsupported' "$err"
		assert_match "$var=\"$r\" names the variable" "$var" "$err"
	done
done
