#!/bin/sh
# make install, install-strip and uninstall into a staging root (make install-check, part of
# make test): every file where the variables say, the library path compiled into the launcher
# following the install (and no other place looked in), the binaries left as built by install
# and stripped by install-strip, nothing of ours left after uninstall; make clean removing only
# $(BUILD). It builds in a copy of $(BUILD), which it leaves as it was.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
MAKE=${MAKE:-make}
bad=0
say() { echo "install: $*"; bad=1; }

root=$(mktemp -d) || exit 2
trap 'rm -rf "$root"' EXIT
D=$root/stage
# The installs build in a copy of $BUILD: another PKGLIBDIR relinks the launcher, which must not
# happen under the tests that run beside this one (make test), nor stay in $BUILD after it.
# (not the tests' outputs, nor the build directories inside it: build/asan, build/clang...)
mkdir "$root/build"
ex=""
for d in "$BUILD"/*/; do [ -f "$d.build-id" ] && ex="$ex --exclude=./$(basename "$d")"; done
# shellcheck disable=SC2086
tar -C "$BUILD" --exclude=./itest-logs --exclude=./itest --exclude=./tests --exclude=./bench \
	--exclude=./go $ex -cf - . | tar -C "$root/build" -xf - || { say "cannot copy $BUILD"; exit 1; }
vars="BUILD=$root/build PREFIX=/opt/rlt LIBDIR=/opt/rlt/lib/x86_64-linux-gnu MANDIR=/opt/rlt/man
	INCLUDEDIR=/opt/rlt/inc BINDIR=/opt/rlt/sbin DESTDIR=$D"
# shellcheck disable=SC2086
$MAKE -s $vars install >"$root/log" 2>&1 || { cat "$root/log"; say "make install failed"; exit 1; }

lib=/opt/rlt/lib/x86_64-linux-gnu
for f in /opt/rlt/sbin/rlthrottle $lib/rlthrottle/librlthrottle.so $lib/librlt.a \
	$lib/pkgconfig/rlthrottle.pc /opt/rlt/inc/rlthrottle.h /opt/rlt/man/man1/rlthrottle.1 \
	/opt/rlt/man/man7/rlthrottle.7; do
	[ -f "$D$f" ] || say "$f not installed"
done
grep -qx "libdir=$lib" "$D$lib/pkgconfig/rlthrottle.pc" || say "rlthrottle.pc: libdir is not $lib"
grep -qx "includedir=/opt/rlt/inc" "$D$lib/pkgconfig/rlthrottle.pc" ||
	say "rlthrottle.pc: includedir is not /opt/rlt/inc"
ver=$(sed -n 's/^#define RLT_VERSION "\(.*\)"/\1/p' include/rlthrottle.h)
grep -qx "Version: $ver" "$D$lib/pkgconfig/rlthrottle.pc" || say "rlthrottle.pc: not version $ver"

# The launcher in the staging root looks where the install will put the library, and only
# there: run from the stage (the library not at $lib yet), it must say it cannot find it at
# $lib, not find the staged copy by a guess such as ../lib.
out=$("$D/opt/rlt/sbin/rlthrottle" -d 1MiB/s -- true 2>&1)
rc=$?
[ "$rc" -eq 125 ] || say "staged launcher: status $rc, not 125 (found a library it should not: $out)"
case $out in
*"$lib/rlthrottle"*) ;;
*) say "staged launcher does not name $lib/rlthrottle: $out" ;;
esac
# Moved beside its library, it runs (the build tree's way).
cp "$D/opt/rlt/sbin/rlthrottle" "$D$lib/rlthrottle/rlthrottle"
"$D$lib/rlthrottle/rlthrottle" -d 1MiB/s -- true || say "launcher beside its library does not run"
rm -f "$D$lib/rlthrottle/rlthrottle"

# install leaves binaries as built (debug information kept, for a dbgsym package to take).
file -L "$D/opt/rlt/sbin/rlthrottle" | grep -q 'with debug_info' ||
	say "make install stripped the launcher"
# shellcheck disable=SC2086
$MAKE -s $vars install-strip >"$root/log" 2>&1 || { cat "$root/log"; say "make install-strip failed"; }
for f in /opt/rlt/sbin/rlthrottle $lib/rlthrottle/librlthrottle.so; do
	file -L "$D$f" | grep -q 'with debug_info' && say "install-strip left $f with debug information"
done

# shellcheck disable=SC2086
$MAKE -s $vars uninstall >"$root/log" 2>&1 || { cat "$root/log"; say "make uninstall failed"; }
left=$(find "$D" -type f)
[ -z "$left" ] || say "uninstall left: $left"
[ -d "$D$lib/rlthrottle" ] && say "uninstall left $lib/rlthrottle/"

# make clean removes $(BUILD) and nothing else.
mkdir -p "$root/b/keep"
$MAKE -s BUILD="$root/b/x" clean >/dev/null 2>&1
mkdir -p "$root/b/x"
touch "$root/b/x/f"
$MAKE -s BUILD="$root/b/x" clean >/dev/null 2>&1 || say "make clean failed"
[ -e "$root/b/x" ] && say "make clean BUILD=... left its directory"
[ -d "$root/b/keep" ] || say "make clean BUILD=... removed another directory"
[ -d "$BUILD" ] || say "make clean BUILD=... removed $BUILD"

[ "$bad" -eq 0 ] && echo "install: ok"
exit "$bad"
