#!/bin/sh
# make bench: prints figures; not a pass/fail gate. Engine micro-benchmarks first, then the
# end-to-end scripts (the preload beside trickle, the seccomp supervisor, the shared scopes).
set -u
here=$(dirname "$0")
for b in "$@"; do
	echo "== $b"
	"$b" || echo "(bench $b exited $?)"
done
for s in preload.sh seccomp.sh trap.sh inject.sh scopes.sh publish.sh; do
	[ -f "$here/$s" ] || continue
	echo "== $s"
	BUILD=${BUILD:-build} sh "$here/$s" || echo "($s exited $?)"
done
