#!/bin/sh
# check_elf.sh ELF BASE: the freestanding blob is what the launcher can map into a program that
# has no C library for it (make trap-test): a static ET_EXEC with no undefined symbol, no
# relocation left, no interpreter, no dynamic section, no TLS segment and no %fs access (the
# program owns %fs), every PT_LOAD inside [BASE, BASE + 64 MiB), its entry rlt_trap_start.
elf=$1
base=$2
bad=0
fail() { echo "check_elf: $elf: $*"; bad=1; }
[ -f "$elf" ] && [ -n "$base" ] || { echo "usage: check_elf.sh ELF BASE"; exit 2; }

und=$(nm -u "$elf")
[ -z "$und" ] || fail "undefined symbols: $(echo $und)"
readelf -hW "$elf" | grep -qE 'Type:[[:space:]]+EXEC' || fail "not an ET_EXEC"
segs=$(readelf -lW "$elf" | awk '$1 ~ /^(TLS|INTERP|DYNAMIC)$/ { print $1 }')
[ -z "$segs" ] || fail "has segments it must not: $(echo $segs)"
readelf -rW "$elf" | grep -q 'There are no relocations' || fail "has relocations left"
fs=$(objdump -d "$elf" | grep -c '%fs')
[ "$fs" -eq 0 ] || fail "$fs instructions use %fs, e.g.: $(objdump -d "$elf" | grep -m1 '%fs')"

end=$((base + 64 * 1024 * 1024))
nload=0
for seg in $(readelf -lW "$elf" | awk '$1 == "LOAD" { print $3 "," $6 }'); do
	va=$(( ${seg%,*} ))
	memsz=$(( ${seg#*,} ))
	nload=$((nload + 1))
	{ [ "$va" -ge "$((base))" ] && [ $((va + memsz)) -le "$end" ]; } ||
		fail "PT_LOAD at $(printf %#x "$va") (+$memsz) is outside the window at $base"
done
[ "$nload" -gt 0 ] || fail "no PT_LOAD"

entry=$(readelf -hW "$elf" | awk '/Entry point/ { print $4 }')
init=$(nm "$elf" | awk '$3 == "rlt_trap_start" { print "0x" $1 }')
[ -n "$init" ] && [ $((entry)) -eq $((init)) ] || fail "entry $entry is not rlt_trap_start ($init)"

[ "$bad" -eq 0 ] && echo "check_elf: ok ($nload PT_LOAD in the window at $base, no undefined symbol, no TLS, no %fs)"
exit "$bad"
