#!/bin/bash
# rlthrottle(7) STATISTICS: several processes writing one RLT_STATS path each append their summary as one line
# (JSON Lines), so no process's figures are lost (bash and the curl it runs: both lines, curl's
# bytes in its own); %p gives each its own file; a FIFO nobody reads never holds the exit; a
# symbolic link planted at the path is not followed.
# fronts: preload (the summary per process is the preload's; the launcher's one line for a command is test_command_budget's)
# parallel-safe: bound, no rate (the exit with a FIFO nobody reads within 2 s)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin fnv
need_cmd curl python3
R=$(dirname "$RLT_LIB")/rlthrottle
mkdir -p "$T/www"
"$ITEST_BIN/fnv" -g 300000 >"$T/www/f.bin"
http_dir http "$T/www"
port=$HTTP_PORT
url="http://127.0.0.1:$port/f.bin"

# bash runs curl (a fork and an exec: two processes, one path); `; true` keeps bash from
# exec'ing curl in its place
# (--per-process: without it the launcher writes one line for the command, test_command_budget)
"$R" --per-process --stats "$T/s.jsonl" -d 10MiB/s -- bash -c "curl -sS -o '$T/got' '$url'; true" 2>"$T/err" ||
	{ show "$T/err"; fail "the command failed"; }
sha256_eq "$T/www/f.bin" "$T/got"
show "$T/s.jsonl"
python3 - "$T/s.jsonl" <<'PY' || fail "the summaries are not one line per process, with curl's bytes"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
docs = [json.loads(l) for l in lines]          # each line one whole object
assert len(docs) >= 2, "expected bash's and curl's lines, got %d" % len(docs)
assert len({d["pid"] for d in docs}) == len(docs), "one line per process"
units = [r["units"] for d in docs for r in d["rules"] if r["variable"] == "RLT_RECV"]
assert max(units) >= 300000, "curl's 300000 bytes are in no line: %r" % units
PY
info "$(wc -l <"$T/s.jsonl") lines, curl's bytes in one of them"

# %p: one file each
RLT_STATS="$T/p.%p.json" RLT_RECV=10MiB/s pre bash -c "curl -sS -o /dev/null '$url'; true"
n=$(ls "$T"/p.*.json | wc -l)
assert_ge "files with %p (bash and curl)" 2 "$n"

# a FIFO nobody reads: the program exits at once all the same
mkfifo "$T/fifo"
t0=$(now_ns)
RLT_STATS="$T/fifo" RLT_RECV=10MiB/s pre curl -sS -o /dev/null "$url" 2>"$T/fifo.err" &
cp=$!
rc=0
timeout 5 bash -c "while kill -0 $cp 2>/dev/null; do sleep 0.05; done" || rc=$?
t1=$(now_ns)
[ "$rc" -eq 0 ] || { kill -9 "$cp" 2>/dev/null; fail "curl with RLT_STATS on a FIFO nobody reads did not exit within 5 s"; }
wait "$cp" || fail "curl failed with RLT_STATS on a FIFO"
ms=$(((t1 - t0) / 1000000))
info "exited in $ms ms with RLT_STATS on a FIFO nobody reads: $(cat "$T/fifo.err")"
assert_le "exit with a FIFO nobody reads (ms)" 2000 "$ms"

# a symbolic link at the path: not followed, its target untouched
echo keep >"$T/target"
ln -s "$T/target" "$T/link.json"
RLT_STATS="$T/link.json" RLT_RECV=10MiB/s pre curl -sS -o /dev/null "$url" 2>"$T/link.err" ||
	fail "curl failed with RLT_STATS on a symbolic link"
assert_eq "the link's target" keep "$(cat "$T/target")"
assert_match "the refusal is said" 'symbolic link' "$(cat "$T/link.err")"
info "ok"
