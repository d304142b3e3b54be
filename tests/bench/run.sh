#!/bin/sh
# make bench: prints figures; not a pass/fail gate. Engine micro-benchmarks first, then the
# end-to-end scripts (the preload beside trickle, --seccomp, the shared scopes, the network
# conditions beside netem or a delaying relay),
# each one's output also kept in $BUILD/bench/NAME.txt, and last the pictures drawn from them
# (plots.sh: PNG files under $BUILD/bench/).
set -u
here=$(dirname "$0")
out=${BUILD:-build}/bench
mkdir -p "$out"
for b in "$@"; do
	echo "== $b"
	"$b" || echo "(bench $b exited $?)"
done
for s in preload.sh seccomp.sh trap.sh inject.sh scopes.sh publish.sh net.sh; do
	[ -f "$here/$s" ] || continue
	echo "== $s"
	{ BUILD=${BUILD:-build} sh "$here/$s" 2>&1 || echo "($s exited $?)"; } | tee "$out/${s%.sh}.txt"
done
echo "== plots.sh"
BUILD=${BUILD:-build} sh "$here/plots.sh" || echo "(plots.sh exited $?)"
