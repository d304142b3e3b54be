#!/bin/bash
# The Debian package, end to end (the CI stage `package`; a developer runs it as it is):
#   1. dpkg-buildpackage -us -uc -b on a copy of the tree (tracked files and new ones not
#      ignored: what a commit would hold), so the build's `make clean` never touches ours;
#   2. lintian on the result: no error, no warning (those we keep are explained in
#      debian/*.lintian-overrides);
#   3. the packages installed with dpkg -i (root, or sudo);
#   4. the installed /usr/bin/rlthrottle throttles a real curl download from a local
#      python3 http.server on 127.0.0.1: the time within bounds of the rate, the file exact.
# A package that was not installed before is purged at the end. Needs dpkg-dev, debhelper,
# lintian, curl, python3 (.ci/packages). KEEP=1 keeps the work directory.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fail() { echo "package: FAIL: $*" >&2; exit 1; }
info() { echo "package: $*"; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
for c in dpkg-buildpackage dh lintian curl python3 sha256sum; do
	command -v "$c" >/dev/null || fail "$c is missing (apt-get install \$(grep -v '^#' .ci/packages))"
done

W=$(mktemp -d /tmp/rlt-package.XXXXXX) || exit 2
srv=""
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] && info "work directory kept: $W" || rm -rf "$W"
}
trap cleanup EXIT

# 1. the build, on a copy
src=$W/src/rlthrottle
mkdir -p "$src"
git ls-files -z -co --exclude-standard | while IFS= read -r -d '' f; do
	[ -e "$f" ] && printf '%s\0' "$f" # a file deleted but not yet committed is left out
done | tar -c --null -T - -f - | tar -x -C "$src" -f - || fail "cannot copy the tree"
# the source package too, from the clean copy, for lintian's source checks
(cd "$W/src" && dpkg-source -b rlthrottle) >"$W/source.log" 2>&1 ||
	{ cat "$W/source.log"; fail "dpkg-source -b failed"; }
info "dpkg-buildpackage -us -uc -b (log: $W/build.log)"
(cd "$src" && DEB_BUILD_OPTIONS="parallel=2 ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1 ||
	{ tail -40 "$W/build.log"; fail "dpkg-buildpackage failed"; }
changes=$(ls "$W"/src/rlthrottle_*.changes 2>/dev/null | head -1)
[ -n "$changes" ] || fail "no .changes file"
for p in rlthrottle librlthrottle-dev; do
	ls "$W"/src/${p}_*.deb >/dev/null 2>&1 || fail "no $p package built"
done
ls "$W"/src/rlthrottle-dbgsym_*.*deb >/dev/null 2>&1 || fail "no rlthrottle-dbgsym package built"
info "built: $(cd "$W/src" && ls *.deb *.ddeb 2>/dev/null | tr '\n' ' ')"

# 2. lintian: the tags by severity, and no error nor warning. One error is known and left to
# the project's owners: debian/copyright cannot name a license the project has not stated
# (license-problem-undefined-license); it is shown, and not counted.
lintian --info --display-info "$changes" "$W"/src/rlthrottle_*.dsc 2>&1 |
	grep -v 'running with root privileges' >"$W/lintian.all"
grep 'license-problem-undefined-license' "$W/lintian.all" | sed 's/^/  (known, for the owners) /'
grep -v 'license-problem-undefined-license' "$W/lintian.all" >"$W/lintian.txt"
info "lintian: $(grep -c '^E:' "$W/lintian.txt") errors, $(grep -c '^W:' "$W/lintian.txt") warnings, $(grep -c '^I:' "$W/lintian.txt") info"
grep -E '^[EWI]:' "$W/lintian.txt" | sed 's/^/  /'
grep -qE '^[EW]:' "$W/lintian.txt" && fail "lintian reports errors or warnings (above)"

# 3. installed
deb=$(ls "$W"/src/rlthrottle_*.deb | head -1)
dev=$(ls "$W"/src/librlthrottle-dev_*.deb | head -1)
was=$(dpkg-query -W -f='${Status}' rlthrottle 2>/dev/null)
$SUDO dpkg -i "$deb" "$dev" >"$W/dpkg.log" 2>&1 || { cat "$W/dpkg.log"; fail "dpkg -i failed"; }
case $was in *" installed") ;; *) trap '$SUDO dpkg --purge rlthrottle librlthrottle-dev >/dev/null 2>&1; cleanup' EXIT ;; esac
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dpkg -L rlthrottle | grep -qx "/usr/lib/$ma/rlthrottle/librlthrottle.so" ||
	fail "the preload library is not at /usr/lib/$ma/rlthrottle/"
dpkg -L librlthrottle-dev | grep -qx "/usr/lib/$ma/librlt.a" || fail "librlt.a is not at /usr/lib/$ma/"
for d in README.md rules.md precisely.md seccomp.md live-view.md scopes.md; do
	dpkg -L rlthrottle | grep -qE "^/usr/share/doc/rlthrottle/$d(\.gz)?$" ||
		fail "the user page $d is not in /usr/share/doc/rlthrottle/"
done
[ "$(pkg-config --variable=libdir rlthrottle 2>/dev/null)" = "/usr/lib/$ma" ] ||
	fail "pkg-config rlthrottle: libdir is not /usr/lib/$ma"
man -w rlthrottle >/dev/null 2>&1 && man -w 7 rlthrottle >/dev/null 2>&1 ||
	info "(man -w does not find the pages: man-db not configured here)"
/usr/bin/rlthrottle --version || fail "/usr/bin/rlthrottle --version"

# 4. a real download, throttled by the installed launcher
mkdir -p "$W/www"
head -c $((800 * 1024)) /dev/urandom >"$W/www/f.bin"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$W/www" "$port" >"$W/http.log" 2>&1 &
srv=$!
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$port/" && break
	sleep 0.1
done
t0=$(date +%s%N)
/usr/bin/rlthrottle -d 200KiB/s -- curl -sS -o "$W/got.bin" "http://127.0.0.1:$port/f.bin" ||
	fail "rlthrottle -d 200KiB/s -- curl failed"
t1=$(date +%s%N)
[ "$(sha256sum <"$W/got.bin")" = "$(sha256sum <"$W/www/f.bin")" ] || fail "the file differs (sha256)"
ms=$(((t1 - t0) / 1000000))
# 800 KiB at 200 KiB/s, of which the first 200 KiB is the burst: 3 s paced. Unthrottled, this
# takes milliseconds.
info "800 KiB at 200KiB/s took ${ms} ms (3000 expected: 600 KiB after the burst), sha256 equal"
[ "$ms" -ge 2400 ] || fail "too fast: ${ms} ms (the download was not throttled)"
[ "$ms" -le 10000 ] || fail "too slow: ${ms} ms"
info "ok"
