#!/bin/bash
# fronts: preload seccomp
# Issue 11, rlthrottle(7) RULES action=dry-run (then its send side, below): curl downloads 4 MiB from a local HTTP server under
# RLT_RECV="100KiB/s action=dry-run". It runs at full speed (no delay: well under the 41 s the
# rate would take), every byte arrives, and its RLT_STATS report the delay that delay would have
# added (within 10% of size/rate - elapsed) and the receives reject would have refused.
. "$(dirname "$0")/lib.sh"
need_lib
need_cmd python3 curl sha256sum
mkdir -p "$T/www"
head -c 4194304 /dev/urandom >"$T/www/blob"
http_dir http "$T/www"
port=$HTTP_PORT
out=$(RLT_RECV="100KiB/s action=dry-run" RLT_STATS="$T/stats.json" throttled \
	curl -sS -o "$T/got" -w '%{time_total} %{size_download}' "http://127.0.0.1:$port/blob") ||
	fail "curl failed: $out"
read -r elapsed size <<<"$out"
info "curl: $size bytes in $elapsed s"
assert_eq "every byte arrived" "$(sha256sum <"$T/www/blob" | cut -d' ' -f1)" "$(sha256sum <"$T/got" | cut -d' ' -f1)"
assert_le "elapsed at full speed (100KiB/s would take 41 s)" 3 "$elapsed"
st=$(tr -d '\n' <"$T/stats.json")
info "stats: $st"
would=$(sed 's/.*"would_delay_ns_total":\([0-9]*\).*/\1/' <<<"$st")
# rlthrottle(7) STATISTICS: what dry-run would have done is never in the fields of what happened
assert_match "nothing was delayed nor rejected" '"delayed":0,"rejected":0,.*"delay_ns_total":0,"delay_ns_max":0,' "$st"
expect=$(calc "($size / 102400 - $elapsed) * 1e9")
info "delay would have added $(calc "$would / 1e9") s; size/rate - elapsed = $(calc "$expect / 1e9") s"
assert_range "delay that delay would have added (ns)" "$(calc "0.9 * $expect")" "$(calc "1.1 * $expect")" "$would"
rej=$(sed 's/.*"would_reject":\([0-9]*\).*/\1/' <<<"$st")
calls=$(sed 's/.*"calls":\([0-9]*\).*/\1/' <<<"$st")
assert_ge "receives reject would have refused (all but the first second's)" 1 "$rej"
assert_le "... never more than the receives" "$calls" "$rej"

# The send side: python sends 1 MiB in one sendall under RLT_SEND="100KiB/s action=dry-run" (and
# RLT_CONNECT="1/s burst=1 action=dry-run" on its three connects): at full speed, every byte
# arrives, and the summary says delay would have held the send 1 MiB/100KiB/s less the burst's
# second (9.24 s), and would have delayed or refused the second and third connects.
cat >"$T/send.py" <<'PY'
import hashlib, socket, threading, time
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4); p = l.getsockname()[1]
data = bytes(range(256)) * 4096
got = []
def sink():
    for _ in range(3):
        c, _a = l.accept(); h = hashlib.sha256()
        while True:
            d = c.recv(65536)
            if not d: break
            h.update(d)
        got.append(h.hexdigest())
th = threading.Thread(target=sink); th.start()
t0 = time.time()
for _ in range(3):
    s = socket.create_connection(("127.0.0.1", p)); s.sendall(data); s.close()
th.join()
print("%.3f %d" % (time.time() - t0, sum(g == hashlib.sha256(data).hexdigest() for g in got)))
PY
throttled_prefix # (timeout outside: preloaded, it would write its own summary over python's)
read -r took same <<<"$(RLT_SEND="100KiB/s action=dry-run" RLT_CONNECT="1/s burst=1 action=dry-run" \
	RLT_STATS="$T/send.json" timeout 20 "${THROTTLED_PREFIX[@]}" python3 "$T/send.py")" ||
	fail "send.py failed"
info "sent 3 x 1 MiB in $took s; $same of 3 arrived exactly"
assert_eq "every byte of the three sends arrived" 3 "$same"
assert_le "at full speed (delay would take 30 s)" 3 "$took"
st=$(tr -d '\n ' <"$T/send.json")
info "stats: $st"
rule() { sed 's/.*"variable":"'"$1"'"\([^}]*\)}.*/\1/' <<<"$st"; }
num() { sed 's/.*"'"$2"'":\([0-9]*\).*/\1/' <<<"$(rule "$1")"; }
# the first send takes its burst and leaves a lag of 9.24 s, each later one adds 10.24 s
assert_range "send: delay that delay would have added (s)" 27 31.5 "$(calc "$(num RLT_SEND would_delay_ns_total) / 1e9")"
assert_eq "send: every send would have waited" 3 "$(num RLT_SEND would_delay)"
assert_eq "connect: the later two would have waited" 2 "$(num RLT_CONNECT would_delay)"
assert_eq "connect: ... or been refused" 2 "$(num RLT_CONNECT would_reject)"
for v in RLT_SEND RLT_CONNECT; do
	for f in delayed rejected delay_ns_total; do
		assert_eq "$v: $f (what happened: nothing)" 0 "$(num $v $f)"
	done
done

# Per key (issue 11: "per key too"): RLT_CONNECT="10/s burst=1 key=peer action=dry-run"; a
# client connects 30 times at once to 127.0.0.2 and 10 times to 127.0.0.3. Nothing waits; each
# key's figures are its own: what delay would have made it wait (its budget's lag: 29 and 9
# slots of 100 ms, less the run's time) and the calls reject would have refused (29 and 9).
lport=$(free_port)
cat >"$T/sink.py" <<'PY'
import socket, sys, threading
port = int(sys.argv[1])
socks = []
for a in ("127.0.0.2", "127.0.0.3"):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((a, port)); s.listen(64); socks.append(s)
def loop(s):
    while True:
        c, _ = s.accept(); c.close()
ts = [threading.Thread(target=loop, args=(s,), daemon=True) for s in socks]
for t in ts: t.start()
print("ready", flush=True)
threading.Event().wait(30)
PY
bg sink python3 "$T/sink.py" "$lport"
wait_port "$lport" 10
cat >"$T/conn.py" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
t0 = time.time()
for a, n in (("127.0.0.2", 30), ("127.0.0.3", 10)):
    for _ in range(n):
        s = socket.create_connection((a, port), timeout=5); s.close()
print("%.3f" % (time.time() - t0))
PY
throttled_prefix
took=$(RLT_CONNECT="10/s burst=1 key=peer action=dry-run" RLT_STATS="$T/kstats.json" \
	"${THROTTLED_PREFIX[@]}" python3 "$T/conn.py" "$lport") || fail "the keyed dry-run client failed: $took"
info "40 connects in $took s"
assert_le "nothing waited (delay would have taken 2.9 s)" 1.5 "$took"
ks=$(tr -d '\n' <"$T/kstats.json")
info "stats: $ks"
for kv in "127.0.0.2 29" "127.0.0.3 9"; do
	read -r a n <<<"$kv"
	ent=$(grep -o "{\"key\":\"$a\"[^}]*}" <<<"$ks") || fail "no busiest entry for $a"
	wd=$(sed 's/.*"would_delay_ns":\([0-9]*\).*/\1/' <<<"$ent")
	wr=$(sed 's/.*"would_reject":\([0-9]*\).*/\1/' <<<"$ent")
	info "$a: would have waited $(calc "$wd / 1e9") s, $wr refused"
	assert_eq "$a: calls reject would have refused" "$n" "$wr"
	# its lag: n slots of 100 ms, less the time its calls took (at most the run's)
	assert_range "$a: what delay would have made it wait (ns)" \
		"$(calc "($n * 0.1 - $took - 0.05) * 1e9")" "$(calc "($n * 0.1 + 0.05) * 1e9")" "$wd"
done
