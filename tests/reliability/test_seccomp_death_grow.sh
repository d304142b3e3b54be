#!/bin/bash
# kill -9 of the old --seccomp supervisor (--seccomp=supervisor, until it goes; the front inside
# the program: test_launcher_death.sh), with processes that changed since it first saw them
# (issue 9, "The supervisor's death"): the keeper tells a recorded process from a later one with
# the same pid by its start time (field 22 of /proc/PID/stat); a field read one off (vsize)
# spared every process whose memory grew. Two grandchildren of the launcher, under a shell:
# python3 that allocated 50 MB and sleeps, and python3 that allocated 50 MB and is in a
# throttled send held by the supervisor at the moment of the kill. Both must die within 2 s,
# and the keeper with them.
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_cmd python3
L=$(dirname "$RLT_LIB")/rlthrottle

alive() { # PID: running (not gone, not a zombie)
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

cat >"$T/grow.py" <<'PY'
import os, socket, sys, time
role, pidfile = sys.argv[1], sys.argv[2]
big = bytearray(50_000_000)  # the memory grows after the supervisor first saw the process
big[::4096] = b"x" * len(big[::4096])
with open(pidfile + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(pidfile + ".tmp", pidfile)
if role == "send":
    s = socket.create_connection(("127.0.0.1", int(sys.argv[3])))
    s.sendall(bytes(8_000_000))  # at 200 KiB/s: some 40 s, held by the supervisor
time.sleep(15)
PY
port=$(free_port)
bg sink python3 -c 'import socket,sys
l=socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(1); c, _ = l.accept()
while c.recv(65536): pass' "$port"
wait_port "$port"

export RLT_SEND="200KiB/s"
bg tree "$L" --seccomp=supervisor -- sh -c "python3 $T/grow.py sleep $T/pid.sleep & python3 $T/grow.py send $T/pid.send $port; wait"
launcher=$LAST_PID
wait_file "$T/pid.sleep" 10
wait_file "$T/pid.send" 10
sleep 1 # the send is under way, held in its slot waits
pids="$(cat "$T/pid.sleep") $(cat "$T/pid.send")"
keeper=$(ps -o pid=,comm= --ppid "$launcher" | awk '$2 == "rlthrottle-keep" { print $1 }' | head -n 1)
info "launcher $launcher, python3 $pids, keeper ${keeper:-none}"
for p in $pids; do alive "$p" || fail "python3 $p ended before the kill: $(cat "$T/tree.err")"; done
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
info "after kill -9 of the launcher: ${ms} ms; left:${left:- none}"
for p in $left; do kill -KILL "$p" 2>/dev/null; done
kalive=""
if [ -n "$keeper" ]; then
	i=0
	while alive "$keeper" && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
	alive "$keeper" && { kalive=1; kill -KILL "$keeper"; }
fi
[ -z "$left" ] || fail "python3 still running 2 s after the supervisor's death:$left"
[ -z "$kalive" ] || fail "the keeper $keeper outlived the tree"
exit 0
