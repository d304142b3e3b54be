#!/bin/bash
# kill -9 of the old --seccomp supervisor (--seccomp=supervisor, until it goes; the front inside
# the program: test_launcher_death.sh) (issue 9, "The supervisor's death"): the supervised tree
# (the command, its child and grandchild, all writing to a file and a pipe) must die with it
# within 2 s, and no write may fail with ENOSYS (the kernel's answer once no supervisor
# listens). A normal end must still end: `| cat` sees EOF, the exit status is the command's.
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_bin deathtree
L=$(dirname "$RLT_LIB")/rlthrottle

# tree MAPFILE: "pid0 pid1 pid2 ok0 ok1 ok2 enosys0 enosys1 enosys2 other0 other1 other2"
tree() { python3 -c 'import struct,sys; print(*struct.unpack("15i", open(sys.argv[1],"rb").read(60)))' "$1"; }
alive() { # PID: running (not gone, not a zombie)
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

export RLT_SEND="1MiB/s"
bg tree "$L" --seccomp=supervisor -- "$ITEST_BIN/deathtree" "$T/map" "$T/out" 20
launcher=$LAST_PID
i=0
while :; do
	[ -s "$T/map" ] && set -- $(tree "$T/map") && [ "$1" != 0 ] && [ "$2" != 0 ] && [ "$3" != 0 ] &&
		[ "$4" -gt 5 ] && [ "$5" -gt 5 ] && [ "$6" -gt 5 ] && break
	[ $i -ge 100 ] && fail "the tree did not start writing within 5 s: $(cat "$T/tree.err")"
	sleep 0.05; i=$((i + 1))
done
pids="$1 $2 $3"
keeper=$(ps -o pid= --ppid "$launcher" | awk -v c="$1" '$1 != c { print $1 }' | head -n 1)
info "launcher $launcher, tree $pids, keeper ${keeper:-none}; writes so far: $4 $5 $6"
kill -KILL "$launcher"
t0=$(now_ns)
left=$pids
while [ -n "$left" ]; do
	still=""
	for p in $left; do alive "$p" && still="$still $p"; done
	left=$still
	[ -z "$left" ] && break
	[ $(( ($(now_ns) - t0) / 1000000 )) -ge 2000 ] && break
	sleep 0.02
done
ms=$(( ($(now_ns) - t0) / 1000000 ))
set -- $(tree "$T/map")
info "after kill -9 of the launcher: ${ms} ms; left:${left:- none}; writes ok $4 $5 $6, ENOSYS $7 $8 $9, other ${10} ${11} ${12}"
for p in $left; do kill -KILL "$p" 2>/dev/null; done
[ -z "$left" ] || fail "processes of the tree still running 2 s after the supervisor's death:$left (ENOSYS failures: $7 $8 $9)"
assert_eq "writes failed with ENOSYS" "0 0 0" "$7 $8 $9"
if [ -n "$keeper" ]; then
	i=0
	while alive "$keeper" && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
	alive "$keeper" && { kill -KILL "$keeper"; fail "the keeper $keeper outlived the tree"; }
	info "the keeper has ended too"
fi

# A normal end: the status is the command's, a pipe after the launcher ends.
out=$(timeout 10 "$L" --seccomp=supervisor -- sh -c 'echo hello; exit 3' | cat; echo "${PIPESTATUS[0]}")
assert_eq "normal end: output and status" "hello 3" "$(echo $out)"
out=$(timeout 10 "$L" --seccomp=supervisor -- sh -c 'sleep 0.2 & echo bg' | cat; echo "${PIPESTATUS[0]}")
assert_eq "normal end with a background child: output and status" "bg 0" "$(echo $out)"
exit 0
