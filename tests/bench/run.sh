#!/bin/sh
# make bench: prints figures; not a pass/fail gate.
set -u
for b in "$@"; do
	echo "== $b"
	"$b" || echo "(bench $b exited $?)"
done
