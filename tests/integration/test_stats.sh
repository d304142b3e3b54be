#!/bin/bash
# rlthrottle(7) STATISTICS RLT_STATS: at exit, one JSON object with pid, elapsed_ns and, per rule, variable, rule,
# calls, allowed, delayed, rejected, units, delay_ns_total, delay_ns_max. %p becomes the pid; units
# are the bytes sent; "stderr" writes it to stderr.
# fronts: preload seccomp
# parallel-safe: counts only (RLT_STATS's fields and units)
. "$(dirname "$0")/lib.sh"
need_lib
need_bin sink blast acceptor conn
need_cmd python3
cat >"$T/check.py" <<'PY'
import json, sys
path, pid, var = sys.argv[1], int(sys.argv[2]), sys.argv[3]
checks = dict(a.split("=", 1) for a in sys.argv[4:])
text = open(path).read()
start = text.find("{")
if start < 0: sys.exit("no JSON object in %s: %r" % (path, text[:200]))
try:
    doc, end = json.JSONDecoder().raw_decode(text[start:])
except ValueError as e:
    sys.exit("invalid JSON in %s: %s: %r" % (path, e, text[:300]))
if not isinstance(doc, dict): sys.exit("top level is not an object")
for k in ("schema", "pid", "elapsed_ns"):
    if k not in doc: sys.exit("missing top-level field %s: %s" % (k, sorted(doc)))
if doc["schema"] != 2: sys.exit("schema %r, expected 2" % doc["schema"])
if "\n" in text[start:start + end]: sys.exit("the summary is not one line (JSON Lines)")
if doc["pid"] != pid: sys.exit("pid %r, expected %d" % (doc["pid"], pid))
if not (isinstance(doc["elapsed_ns"], int) and doc["elapsed_ns"] > 0): sys.exit("bad elapsed_ns %r" % doc["elapsed_ns"])
rules = []
def walk(o):
    if isinstance(o, dict):
        if "variable" in o: rules.append(o)
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(doc)
if not rules: sys.exit("no per-rule objects (with 'variable') found")
fields = ("variable", "rule", "index", "calls", "allowed", "delayed", "rejected", "units", "delay_ns_total", "delay_ns_max",
          "would_delay", "would_delay_ns_total", "would_delay_ns_max", "would_reject")
for r in rules:
    for f in fields:
        if f not in r: sys.exit("rule object lacks %s: %r" % (f, r))
    if r["index"] < 1: sys.exit("rules are numbered from 1: %r" % r)
    for f in fields[2:]:
        if not (isinstance(r[f], int) and r[f] >= 0): sys.exit("%s is not a non-negative integer: %r" % (f, r[f]))
    if r["delay_ns_max"] > r["delay_ns_total"]: sys.exit("delay_ns_max > delay_ns_total: %r" % r)
mine = [r for r in rules if r["variable"] == var]
if len(mine) != 1: sys.exit("expected one rule for %s, found %d: %r" % (var, len(mine), rules))
r = mine[0]
for k, v in checks.items():
    if k.endswith("_min"):
        if r[k[:-4]] < int(v): sys.exit("%s = %r, expected >= %s" % (k[:-4], r[k[:-4]], v))
    elif k == "rule_has":
        if v not in r["rule"]: sys.exit("rule %r does not contain %r" % (r["rule"], v))
    elif r[k] != int(v): sys.exit("%s = %r, expected %s" % (k, r[k], v))
print("ok: %r" % r)
PY

# 1. bytes sent, no delay; %p in the path
RLT_STATS="$T/st.%p.json" RLT_SEND="100MB/s" do_send s1 -n 100000 -s 10000
pid=$(kv pid "$B_OUT")
[ -f "$T/st.$pid.json" ] || { ls -la "$T"; fail "no stats file $T/st.$pid.json (%p -> pid $pid)"; }
python3 -m json.tool "$T/st.$pid.json" >/dev/null || fail "python3 -m json.tool rejects $T/st.$pid.json"
python3 "$T/check.py" "$T/st.$pid.json" "$pid" RLT_SEND units=100000 rejected=0 rule_has=100MB/s calls_min=10 allowed_min=10 ||
	{ show "$T/st.$pid.json"; fail "stats content (send)"; }

# 2. delays are counted: 256 KiB at 1 MiB/s with a 64 KiB burst waits ~0.19 s in all
RLT_STATS="$T/d.json" RLT_SEND="1MiB/s burst=64KiB" do_send s2 -n 262144 -s 16384
pid=$(kv pid "$B_OUT")
python3 "$T/check.py" "$T/d.json" "$pid" RLT_SEND units=262144 delayed_min=1 delay_ns_total_min=100000000 ||
	{ show "$T/d.json"; fail "stats content (delays)"; }

# 3. rejects are counted: connect 2 of 3
start_srv acc acceptor -D 30
RLT_STATS="$T/c.json" RLT_CONNECT="2/h burst=2 action=reject" throttled "$ITEST_BIN/conn" -p "$SRV_PORT" -S "open open open" >"$T/c.out" 2>&1 || fail "conn failed"
pid=$(kv pid "$T/c.out")
python3 "$T/check.py" "$T/c.json" "$pid" RLT_CONNECT calls=3 allowed=2 rejected=1 units=2 ||
	{ show "$T/c.json"; fail "stats content (reject)"; }

# 3b. a program killed by SIGPIPE (yes, writing into a pipe whose reader has gone) still leaves
# its summary, and still dies of SIGPIPE
need_cmd yes head
RLT_STATS="$T/pipe.%p.json" RLT_SEND="100MB/s" throttled yes | head -c 1 >/dev/null
assert_eq "exit status of the writer (128 + SIGPIPE)" 141 "${PIPESTATUS[0]}"
f=$(ls "$T"/pipe.*.json 2>/dev/null | head -1)
[ -n "$f" ] || fail "no summary from a process killed by SIGPIPE"
bp=$(basename "$f" .json | sed 's/^pipe\.//')
python3 "$T/check.py" "$f" "$bp" RLT_SEND calls=0 units=0 || { show "$f"; fail "stats content (killed by SIGPIPE)"; }

# 4. RLT_STATS=stderr
RLT_STATS=stderr RLT_SEND="100MB/s" do_send s4 -n 5000 -s 5000
pid=$(kv pid "$B_OUT")
python3 "$T/check.py" "$T/blast_s4.err" "$pid" RLT_SEND units=5000 || { show "$T/blast_s4.err"; fail "stats on stderr"; }
