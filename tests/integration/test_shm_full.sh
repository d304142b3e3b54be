#!/bin/bash
# Issue 17 row 8: a full /dev/shm (a container's 64 MiB default, filled) never raises SIGBUS:
# memory that is mapped is allocated before it is touched (posix_fallocate of the page and of
# shared segments, keyed tables included). /bin/true throttled runs, unpublished, with one
# warning under the preload; a shared-scope rule's load fails in one line, status 125; a shared
# keyed table larger than the room left fails so too. Before: each died of SIGBUS (status 135).
# Run in a private mount namespace with a 64 KiB tmpfs on /dev/shm: the real one is never
# filled. The same lines under --seccomp (the handler loads the rules as the preload does).
# fronts: preload seccomp
# parallel-safe
if [ -z "${RLT_SHM_NS:-}" ]; then
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 ||
		{ echo "SKIP: needs root and unshare for a private /dev/shm"; exit 77; }
	exec env RLT_SHM_NS=1 unshare -m --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
need_lib
mount -t tmpfs -o size=64k tmpfs /dev/shm || skip "cannot mount a tmpfs on /dev/shm here"

# true_says NAME WHAT STATUS ERE RULE: /bin/true throttled under RLT_SEND=RULE ends with STATUS and
# one line on stderr that matches ERE (WHAT says which case).
true_says() {
	local rc=0
	RLT_SEND="$5" throttled /bin/true 2>"$T/$1.err" || rc=$?
	show "$T/$1.err"
	assert_eq "status, $2" "$3" "$rc"
	assert_eq "lines on stderr" 1 "$(wc -l <"$T/$1.err")"
	assert_match "the message" "$4" "$(cat "$T/$1.err")"
}

# a shared keyed table larger than the room there: the load fails in one line
true_says big "a keyed segment larger than /dev/shm" 125 "No space left" \
	"1MiB/s key=peer keys=65536 scope=shared:rlt-big"

head -c 1M /dev/zero >/dev/shm/fill 2>/dev/null
assert_eq "room left in /dev/shm (KiB)" 0 "$(df -k --output=avail /dev/shm | tail -1 | tr -d ' ')"

true_says true "/dev/shm full" 0 "No space left on device \(running unpublished\)" "1MiB/s"

true_says shared "a shared-scope rule, /dev/shm full" 125 "scope=shared:rlt-full.*No space left" \
	"1MiB/s scope=shared:rlt-full"
