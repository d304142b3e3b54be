#!/bin/bash
# Rules far above any link, written to count rather than limit (issue 9): RLT_SEND=1TB/s and
# RLT_RECV=1TiB/s are accepted (they were refused: "at most 16 G units per second"), every byte
# arrives (sha256), nothing is slowed, and the statistics count every byte; under the preload
# and under --seccomp. A window rule above 16 G units per second is still refused, saying why.
# parallel-safe: bound, no rate (8 MiB in under 15 s under a 1TB/s rule, which binds nothing; bytes and counts)
source "$(dirname "$0")/../integration/lib.sh"
need_lib
need_cmd python3 sha256sum
L=$(dirname "$RLT_LIB")/rlthrottle
SIZE=$((8 * 1024 * 1024))

cat >"$T/srv.py" <<'PY'
import hashlib, socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())
PY
cat >"$T/cli.py" <<'PY'
import socket, sys
data = open(sys.argv[2], "rb").read()
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for i in range(0, len(data), 1 << 20):
    c.sendall(data[i:i + (1 << 20)])
c.close()
PY
head -c "$SIZE" /dev/urandom >"$T/data"
want="$SIZE $(sha256sum "$T/data" | cut -d' ' -f1)"

for r in "1TB/s" "1TiB/s" "100GiB/s" "8Tbit/s" "1TB/s algo=leaky"; do
	"$L" --check -u "$r" >/dev/null 2>"$T/check.err" || fail "--check refuses $r: $(cat "$T/check.err")"
done
info "--check accepts 1TB/s, 1TiB/s, 100GiB/s, 8Tbit/s, 1TB/s algo=leaky"
if "$L" --check -u "100GB/s algo=fixed-window" >/dev/null 2>"$T/check.err"; then
	fail "a fixed window of 100GB/s is accepted"
fi
grep -q "too high for a window" "$T/check.err" || fail "the window's refusal does not say why: $(cat "$T/check.err")"

for front in preload seccomp; do
	rm -f "$T/port" "$T/srv.stats" "$T/cli.stats"
	bg srv env LD_PRELOAD="$RLT_LIB" RLT_RECV="1TiB/s" RLT_STATS="$T/srv.stats" python3 "$T/srv.py" "$T/port"
	srv=$LAST_PID
	wait_file "$T/port"
	t0=$(now_ns)
	if [ $front = seccomp ]; then
		RLT_SEND="1TB/s" RLT_STATS="$T/cli.stats" timeout 20 "$L" --seccomp -- python3 "$T/cli.py" "$(cat "$T/port")" "$T/data" 2>"$T/cli.err"
	else
		RLT_SEND="1TB/s" RLT_STATS="$T/cli.stats" timeout 20 env LD_PRELOAD="$RLT_LIB" python3 "$T/cli.py" "$(cat "$T/port")" "$T/data" 2>"$T/cli.err"
	fi
	rc=$?
	ms=$(( ($(now_ns) - t0) / 1000000 ))
	[ $rc = 0 ] || fail "$front: the client failed ($rc): $(cat "$T/cli.err")"
	wait_pid "$srv" 10 || fail "$front: the server did not end"
	got=$(cat "$T/srv.out")
	info "$front: $SIZE bytes in $ms ms at RLT_SEND=1TB/s, RLT_RECV=1TiB/s; server got: $got"
	assert_eq "$front: bytes and sha256 at the server" "$want" "$got"
	# JSON Lines: one line per process that wrote (a launcher script's helpers too): all summed
	sent=$(python3 -c 'import json,sys; print(sum(r["units"] for l in open(sys.argv[1]) for r in json.loads(l)["rules"] if r["variable"]=="RLT_SEND"))' "$T/cli.stats")
	recvd=$(python3 -c 'import json,sys; print(sum(r["units"] for l in open(sys.argv[1]) for r in json.loads(l)["rules"] if r["variable"]=="RLT_RECV"))' "$T/srv.stats")
	assert_eq "$front: bytes counted by RLT_SEND=1TB/s" "$SIZE" "$sent"
	assert_eq "$front: bytes counted by RLT_RECV=1TiB/s" "$SIZE" "$recvd"
	[ $ms -lt 15000 ] || fail "$front: 8 MiB took $ms ms under a 1TB/s rule"
done
exit 0
