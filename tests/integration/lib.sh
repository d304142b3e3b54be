# Helpers sourced by tests/integration/test_*.sh (bash). Loopback only.
#
# Environment (set by tests/run-integration.sh): RLT_LIB = the library to preload,
# ITEST_BIN = directory of the helper programs built from tests/integration/*.c.
#
# Conventions: a test prints "info: ..." lines as it goes, and ends with exit 0 (pass),
# exit 1 after "FAIL: ..." (fail), or exit 77 after "SKIP: ..." (a capability this machine lacks).
# Every server a test starts goes through bg, which records its PID; the EXIT trap kills exactly
# those PIDs (never by name) and removes the test's temporary directory.

set -u

ITEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${RLT_LIB:=$ITEST_DIR/../../build/librlthrottle.so}"
: "${ITEST_BIN:=$ITEST_DIR/../../build/itest}"
RLT_LIB=$(cd "$(dirname "$RLT_LIB")" 2>/dev/null && pwd)/$(basename "$RLT_LIB")
ITEST_BIN=$(cd "$ITEST_BIN" 2>/dev/null && pwd || echo "$ITEST_BIN")
export RLT_LIB ITEST_BIN

# Python writes no byte code into the tree (tests/integration/*.py are run, not installed).
export PYTHONDONTWRITEBYTECODE=1

# No rule from the caller's environment may leak into a test.
unset RLT_CONNECT RLT_ACCEPT RLT_SEND RLT_RECV RLT_CONNS RLT_NET RLT_STATS RLT_LOG RLT_ON_ERROR RLT_INHERIT LD_PRELOAD

T=$(mktemp -d "${TMPDIR:-/tmp}/rlt-itest.XXXXXX")
BG_PIDS=""
LAST_PID=""

cleanup() {
	local p
	for p in $BG_PIDS; do kill -TERM "$p" 2>/dev/null; done
	for p in $BG_PIDS; do
		local i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.05; i=$((i + 1)); done
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

info() { echo "info: $*"; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# need_lib: the library must exist (a missing library is a failure, not a skip).
need_lib() { [ -f "$RLT_LIB" ] || fail "library not built: $RLT_LIB"; }
need_bin() { local b; for b in "$@"; do [ -x "$ITEST_BIN/$b" ] || fail "helper not built: $ITEST_BIN/$b"; done; }
need_cmd() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 || fail "command not installed: $c (listed in .ci/packages?)"; done; }
need_ipv6() {
	python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1",0))' 2>/dev/null ||
		skip "no IPv6 on loopback (::1 cannot be bound)"
}

# need_gonb: tests/integration/gonb.go built once (static: CGO off) in the build directory,
# under a lock (tests run two at a time, and a second build would replace the binary another
# test runs); GONB is its path. Skips without go.
need_gonb() {
	command -v go >/dev/null 2>&1 || skip "go is not installed"
	local gdir
	gdir=$(cd "$ITEST_BIN/.." && pwd)/go
	mkdir -p "$gdir"
	GONB=$gdir/gonb
	(
		flock 9
		if [ ! -x "$GONB" ] || [ "$ITEST_DIR/gonb.go" -nt "$GONB" ]; then
			cp "$ITEST_DIR/gonb.go" "$gdir/" && cd "$gdir" &&
				GOCACHE=$gdir/cache GOPATH=$gdir/path GO111MODULE=off CGO_ENABLED=0 \
					timeout 100 go build -o gonb.new gonb.go && mv -f gonb.new gonb
		fi
	) 9>"$gdir/.lock" >"$T/build.log" 2>&1 || { show "$T/build.log"; fail "cannot build gonb.go"; }
}

# Run a command with the library preloaded (variables go before: pre VAR=x cmd ...). Only for
# what is the preload's own (its loader, LD_PRELOAD order); a behaviour goes through throttled.
pre() { env LD_PRELOAD="$RLT_LIB" "$@"; }
# throttled CMD...: CMD under the front of this run (the matrix of tests/run-integration.sh):
# preloaded, or under `rlthrottle --seccomp --per-process` when UNDER_SECCOMP is set. The RLT_* variables come
# from the caller either way (RLT_SEND=... throttled cmd, or RLT_SEND=... bg NAME throttled cmd).
# (UNDER_SECCOMP is read at each call: a test may switch fronts itself.)
throttled_prefix() {
	if [ -n "${UNDER_SECCOMP:-}" ]; then
		# --per-process: each process its own budgets, as under the bare preload the other
		# run uses, so that the matrix compares the fronts (test_command_budget tests the
		# launcher's one budget for the command on both)
		THROTTLED_PREFIX=("$(dirname "$RLT_LIB")/rlthrottle" --seccomp --per-process --)
	else
		THROTTLED_PREFIX=(env LD_PRELOAD="$RLT_LIB")
	fi
}
throttled() { throttled_prefix; "${THROTTLED_PREFIX[@]}" "$@"; }
# front: the front of this run, preload or seccomp (for the few lines that differ by design).
front() { if [ -n "${UNDER_SECCOMP:-}" ]; then echo seccomp; else echo preload; fi; }
# prog_pid PID: the throttled program's own pid for a PID that bg started through throttled (under
# --seccomp that is the launcher, whose child is the program).
prog_pid() {
	if [ -n "${UNDER_SECCOMP:-}" ]; then
		local i=0 c=""
		while [ -z "$c" ] && [ $i -lt 100 ]; do
			c=$(ps -o pid= --ppid "$1" | awk '{ print $1; exit }')
			[ -n "$c" ] || sleep 0.05
			i=$((i + 1))
		done
		echo "$c"
	else
		echo "$1"
	fi
}

# bg NAME CMD...: start CMD in the background, stdout to $T/NAME.out, stderr to $T/NAME.err,
# record its PID (LAST_PID and the cleanup list).
# `bg NAME throttled CMD...` starts the prefix itself, a simple command that the background
# process execs: LAST_PID is then the program (or its launcher), not a subshell that a kill
# would leave its program behind.
bg() {
	local name=$1; shift
	[ "$1" = throttled ] && { shift; throttled_prefix; set -- "${THROTTLED_PREFIX[@]}" "$@"; }
	"$@" >"$T/$name.out" 2>"$T/$name.err" &
	LAST_PID=$!
	BG_PIDS="$BG_PIDS $LAST_PID"
}

# wait_pid PID [SECONDS]: wait (bounded) for a background process to end; returns its status.
wait_pid() {
	local pid=$1 lim=${2:-30} i=0
	while kill -0 "$pid" 2>/dev/null; do
		[ $i -ge $((lim * 20)) ] && { echo "info: pid $pid still running after ${lim}s" >&2; return 124; }
		sleep 0.05; i=$((i + 1))
	done
	wait "$pid" 2>/dev/null
}

# page_of PID: the page a live (or not yet reaped) process publishes, /dev/shm/rlthrottle-UID-PID-START
# (rlthrottle(7) FILES). Not a glob on the pid: an earlier process of that pid, killed by SIGKILL,
# may have left its page, and pids wrap in a long run.
page_of() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20)
	[ -n "$st" ] || return 1
	echo "/dev/shm/rlthrottle-$(id -u)-$1-$st"
}
# wait_page PID [SECONDS]: wait until PID's own page exists and print its path; 1 if it does not come.
wait_page() {
	local lim=${2:-10} i=0 p
	while [ $i -lt $((lim * 20)) ]; do
		p=$(page_of "$1") && [ -e "$p" ] && { echo "$p"; return 0; }
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

# wait_file PATH [SECONDS]: wait until PATH is a non-empty file (a helper's port file) or a socket.
wait_file() {
	local f=$1 lim=${2:-10} i=0
	while [ ! -s "$f" ] && [ ! -S "$f" ]; do
		[ $i -ge $((lim * 20)) ] && fail "timed out waiting for $f"
		sleep 0.05; i=$((i + 1))
	done
}

# wait_port PORT [SECONDS]: wait until something listens on TCP PORT (checked with ss, so no
# connection is made that a counting server would see).
wait_port() {
	local port=$1 lim=${2:-10} i=0
	while ! ss -Hltn "sport = :$port" 2>/dev/null | grep -q .; do
		[ $i -ge $((lim * 20)) ] && fail "timed out waiting for a listener on port $port"
		sleep 0.05; i=$((i + 1))
	done
}

# free_port [ADDR]: a TCP port free on ADDR right now.
free_port() {
	python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

# start_srv NAME PROG ARGS...: start an ITEST helper server with -P portfile, wait until it has
# written its port, and print the port. Also sets LAST_PID.
# With SRV_THROTTLED=1 the server itself is the throttled program (through throttled).
start_srv() {
	local name=$1 prog=$2; shift 2
	rm -f "$T/$name.port" "$T/$name.port.tmp"
	if [ -n "${SRV_THROTTLED:-}" ]; then
		bg "$name" throttled "$ITEST_BIN/$prog" -P "$T/$name.port" "$@"
	else
		bg "$name" "$ITEST_BIN/$prog" -P "$T/$name.port" "$@"
	fi
	wait_file "$T/$name.port"
	SRV_PORT=$(cat "$T/$name.port")
}

# http_dir NAME DIR: python's http.server on loopback serving DIR (started by bg NAME); sets
# HTTP_PORT once it listens.
http_dir() {
	HTTP_PORT=$(free_port)
	bg "$1" python3 -m http.server --bind 127.0.0.1 --directory "$2" "$HTTP_PORT"
	wait_port "$HTTP_PORT" 10
}

# file_sink NAME PORTFILE FILE: a TCP listener on loopback (started by bg NAME; LAST_PID) that
# writes its port to PORTFILE and what its one client sends to FILE, and ends at the client's EOF.
file_sink() {
	bg "$1" python3 -c '
import os, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(1)
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept()
with open(sys.argv[2], "wb") as f:
    while True:
        b = c.recv(65536)
        if not b: break
        f.write(b)' "$2" "$3"
}

now_ns() { date +%s%N; }

# kv KEY FILE_OR_STRING: the value of KEY=VALUE in the last line that has it.
kv() {
	local key=$1 src=$2
	if [ -f "$src" ]; then cat "$src"; else printf '%s\n' "$src"; fi |
		awk -v k="$key" '{ for (i = 1; i <= NF; i++) { n = index($i, "="); if (n && substr($i, 1, n - 1) == k) v = substr($i, n + 1) } } END { print v }'
}

# Script-mode results of blast/pull/conn ("step send N -> R STATUS at_ms=.. took_ms=..",
# "step open N -> STATUS ..."): step_status FILE I and step_took FILE I give STATUS and took_ms of
# the I-th call step (send, recv or open lines only).
step_line() { grep -E '^step (send|recv|open) ' "$1" | sed -n "${2}p"; }
step_status() { step_line "$1" "$2" | sed 's/ at_ms=.*//' | awk '{ print $NF }'; }
step_result() { step_line "$1" "$2" | sed 's/.*-> \([-0-9]*\).*/\1/'; }
step_took() { step_line "$1" "$2" | sed 's/.*took_ms=\([0-9.]*\).*/\1/'; }
# assert_steps WHAT FILE STATUS...: the steps of FILE end with these statuses, in order (step
# i's is "WHAT i").
assert_steps() {
	local what=$1 f=$2 i=1 st
	shift 2
	for st in "$@"; do
		assert_eq "$what $i" "$st" "$(step_status "$f" $i)"
		i=$((i + 1))
	done
}

# Floating point helpers via awk.
calc() { awk "BEGIN { printf \"%.6g\", $* }"; }
fle() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }

assert_eq() { # WHAT EXPECTED GOT
	[ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
	info "$1 = $3 (ok)"
}
assert_ne() { # WHAT UNEXPECTED GOT
	[ "$2" != "$3" ] || fail "$1: expected anything but '$2'"
}
assert_range() { # WHAT LO HI GOT
	[ -n "$4" ] || fail "$1: no value (expected $2..$3)"
	fle "$2" "$4" && fle "$4" "$3" || fail "$1: expected between $2 and $3, got $4"
	info "$1 = $4 (ok: $2..$3)"
}
assert_le() { # WHAT MAX GOT
	[ -n "$3" ] || fail "$1: no value (expected <= $2)"
	fle "$3" "$2" || fail "$1: expected at most $2, got $3"
	info "$1 = $3 (ok: <= $2)"
}
assert_ge() { # WHAT MIN GOT
	[ -n "$3" ] || fail "$1: no value (expected >= $2)"
	fle "$2" "$3" || fail "$1: expected at least $2, got $3"
	info "$1 = $3 (ok: >= $2)"
}
assert_match() { # WHAT ERE STRING
	printf '%s\n' "$3" | grep -Eq -- "$2" || fail "$1: expected to match /$2/, got: $3"
	info "$1 matches /$2/ (ok)"
}
assert_nomatch() { # WHAT ERE STRING
	printf '%s\n' "$3" | grep -Eq -- "$2" && fail "$1: expected no match for /$2/, got: $3"
	info "$1 has no /$2/ (ok)"
}

# assert_rate WHAT UNITS ELAPSED_NS TARGET_PER_S LO HI: UNITS/elapsed over the target within
# [LO, HI]. Also demands that the measurement spans at least MIN_SPAN_S (default 0.5) seconds.
assert_rate() {
	local what=$1 units=$2 ns=$3 target=$4 lo=$5 hi=$6
	[ -n "$units" ] && [ -n "$ns" ] || fail "$what: missing measurement (units='$units' ns='$ns')"
	fle "${MIN_SPAN_S:-0.5}" "$(calc "$ns / 1e9")" || fail "$what: measured over only $(calc "$ns / 1e9") s (units=$units): too fast, not throttled?"
	local rate ratio
	rate=$(calc "$units * 1e9 / $ns")
	ratio=$(calc "$rate / $target")
	info "$what: $units units in $(calc "$ns / 1e9") s = $rate/s, target $target/s, ratio $ratio"
	fle "$lo" "$ratio" && fle "$ratio" "$hi" || fail "$what: rate ratio $ratio outside $lo..$hi (achieved $rate/s, target $target/s)"
}

# assert_fast WHAT ELAPSED_NS MAX_S: finished within MAX_S seconds (not throttled).
assert_fast() {
	local s
	s=$(calc "$2 / 1e9")
	fle "$s" "$3" || fail "$1: took $s s, expected under $3 s (throttled when it should not be?)"
	info "$1: took $s s (ok: < $3 s, not throttled)"
}

# sha256_eq FILE1 FILE2
sha256_eq() {
	local a b
	a=$(sha256sum <"$1" | cut -d' ' -f1)
	b=$(sha256sum <"$2" | cut -d' ' -f1)
	[ "$a" = "$b" ] || fail "sha256 differs: $1 ($a) vs $2 ($b)"
	info "sha256 $1 == $2 (ok)"
}

# proc_cpu_s PID: user+sys CPU seconds of a live process, from /proc/PID/stat.
proc_cpu_s() {
	local hz
	hz=$(getconf CLK_TCK)
	awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / hz }' "/proc/$1/stat"
}

# intact LABEL SENDER SENDER_OUT SENT_KEY RECEIVER RECEIVER_OUT GOT_KEY: the bytes the sender's
# report counts as sent (SENT_KEY=) all arrived (the receiver's GOT_KEY=), with the same fnv=.
intact() {
	local sent got fs fg
	sent=$(kv "$4" "$3"); got=$(kv "$7" "$6")
	fs=$(kv fnv "$3"); fg=$(kv fnv "$6")
	[ "$sent" = "$got" ] || { show "$3" "$6"; fail "$1: $2 sent $sent bytes, $5 got $got"; }
	[ "$fs" = "$fg" ] || { show "$3" "$6"; fail "$1: checksum differs: sent $fs, received $fg"; }
	info "$1: $got bytes arrived intact (fnv $fg)"
}

# served LABEL SERVER "SERVER_OPTS" CLIENT CLIENT_ARGS...: start the helper SERVER (start_srv),
# run CLIENT throttled against it (-p PORT CLIENT_ARGS), wait for the server to end; CLIENT must
# exit 0. Sets CL_OUT and SV_OUT (their reports, files).
served() {
	local label=$1 srv=$2 opts=$3 cl=$4 spid rc=0
	shift 4
	start_srv "${srv}_$label" "$srv" $opts
	spid=$LAST_PID
	CL_OUT=$T/${cl}_$label.out
	SV_OUT=$T/${srv}_$label.out
	throttled "$ITEST_BIN/$cl" -p "$SRV_PORT" "$@" >"$CL_OUT" 2>"$T/${cl}_$label.err" || rc=$?
	# a datagram sink cannot see the client's end: told, it waits 300 ms more, not its idle time
	[ "$srv" = sink ] && case " $opts " in *" -u "*) kill -USR1 "$spid" 2>/dev/null ;; esac
	wait_pid "$spid" 20 || { show "$CL_OUT" "$T/${cl}_$label.err" "$SV_OUT"; fail "$label: $srv did not finish"; }
	if [ $rc -ne 0 ]; then show "$CL_OUT" "$T/${cl}_$label.err" "$SV_OUT"; fail "$label: $cl exited $rc"; fi
}

# do_send LABEL BLAST_ARGS...: start a sink (extra options in $SINK_ARGS), run blast throttled
# (the RLT_* variables come from the caller: RLT_SEND=... do_send ...), wait for the sink, and check
# that the sink got exactly the bytes blast sent (count and FNV-1a). Sets B_OUT and S_OUT (files).
do_send() {
	local label=$1
	shift
	served "$label" sink "${SINK_ARGS:-}" blast "$@"
	B_OUT=$CL_OUT S_OUT=$SV_OUT
	[ -n "${NOCHECK:-}" ] || intact "$label" blast "$B_OUT" sent sink "$S_OUT" bytes
}

# do_recv LABEL PULL_ARGS...: start a source (options in $SRC_ARGS, e.g. "-n 1000000"), run pull
# throttled, check pull got exactly what the source sent. Sets P_OUT and SRC_OUT.
do_recv() {
	local label=$1
	shift
	served "$label" source "${SRC_ARGS:-}" pull "$@"
	P_OUT=$CL_OUT SRC_OUT=$SV_OUT
	intact "$label" source "$SRC_OUT" sent pull "$P_OUT" recv
}

# recv_paced LABEL UNITS RATE MIN_SPAN_S PULL_ARGS...: do_recv (RLT_RECV from the caller), then
# UNITS (what came after the burst) at RATE per second (0.7..1.3, measured over MIN_SPAN_S at
# least), and the receiver not spinning while it waits (CPU per wall second at most 0.3).
recv_paced() {
	local label=$1 units=$2 rate=$3 span=$4
	shift 4
	do_recv "$label" "$@"
	MIN_SPAN_S=$span assert_rate "$label" "$units" "$(kv elapsed_ns "$P_OUT")" "$rate" 0.7 1.3
	assert_cpu "$label receiver" "$(kv cpu_ns "$P_OUT")" "$(kv total_ns "$P_OUT")" 0.3
}

# assert_cpu WHAT CPU_NS WALL_NS MAX: CPU seconds per wall second at most MAX (no spinning).
assert_cpu() {
	local r
	r=$(calc "$2 / $3")
	fle "$r" "$4" || fail "$1: used $r CPU-seconds per second (max $4): spinning while throttled?"
	info "$1: $r CPU-s per s (ok: <= $4)"
}

# show FILE...: print files into the log (for diagnosis).
show() { local f; for f in "$@"; do [ -f "$f" ] && sed "s|^|  $(basename "$f"): |" "$f" | head -40; done; }

cd "$T" || exit 1

# nginx_conf WORKERS PORT: $T/ngx/nginx.conf for a non-daemon nginx with WORKERS worker
# processes answering "ok" on 127.0.0.1:PORT, one connection per request, logs in $T/ngx/logs
# (the access log: pid, connection, time, status).
nginx_conf() {
	mkdir -p "$T/ngx/logs" "$T/ngx/tmp"
	cat >"$T/ngx/nginx.conf" <<-CONF
	worker_processes $1;
	daemon off;
	master_process on;
	pid $T/ngx/nginx.pid;
	error_log $T/ngx/logs/error.log warn;
	events { worker_connections 1024; }
	http {
	    log_format rlt '\$pid \$connection \$msec \$status';
	    access_log $T/ngx/logs/access.log rlt;
	    client_body_temp_path $T/ngx/tmp/body;
	    proxy_temp_path $T/ngx/tmp/proxy;
	    fastcgi_temp_path $T/ngx/tmp/fastcgi;
	    uwsgi_temp_path $T/ngx/tmp/uwsgi;
	    scgi_temp_path $T/ngx/tmp/scgi;
	    keepalive_timeout 0;
	    server {
	        listen 127.0.0.1:$2;
	        location / { return 200 "ok\n"; }
	    }
	}
	CONF
}

# nginx_up PORT [NAME]: the nginx that `bg NAME ...` started (NAME nginx by default, its pid in
# $npid) listens on PORT and still runs.
nginx_up() {
	wait_port "$1" 10
	sleep 0.3
	kill -0 "$npid" 2>/dev/null || { show "$T/${2:-nginx}.err" "$T/ngx/logs/error.log"; fail "nginx did not start"; }
}

# nginx_workers: the pids of the workers of the nginx whose launch is $npid (under --seccomp its
# master is the launcher's child), space-separated.
nginx_workers() { ps -o pid= --ppid "$(prog_pid "$npid")" | tr -d ' ' | tr '\n' ' '; }

# nginx_hammer PORT CLIENTS: hey without keep-alive for 3 s, CLIENTS at once, against the nginx
# on PORT whose workers are $workers. Sets HEY_T0 and HEY_T1 (when hey ran) and WORKERS_CPU_NS
# (the workers' CPU meanwhile); nginx must have logged requests.
nginx_hammer() {
	local w cpu0=0 cpu1=0
	for w in $workers; do cpu0=$(calc "$cpu0 + $(proc_cpu_s "$w")"); done
	HEY_T0=$(now_ns)
	hey -z 3s -c "$2" -t 20 -disable-keepalive "http://127.0.0.1:$1/" >"$T/hey.out" 2>&1 || { show "$T/hey.out"; fail "hey failed"; }
	HEY_T1=$(now_ns)
	for w in $workers; do [ -e "/proc/$w/stat" ] && cpu1=$(calc "$cpu1 + $(proc_cpu_s "$w")"); done
	WORKERS_CPU_NS=$(calc "($cpu1 - $cpu0) * 1e9")
	grep -E 'Requests/sec|\[200\]' "$T/hey.out" | sed 's/^/info: hey: /'
	[ -s "$T/ngx/logs/access.log" ] || { show "$T/ngx/logs/error.log"; fail "nginx logged no request"; }
}
