#!/bin/sh
# The layering, checked on what was built (make layering, part of make test): every external
# name of an object carries its folder's prefix, so that none is defined in two folders and a
# name says where it lives; a folder includes only the headers its layer may see; and a name a
# header declares is defined in the file of the header's name (or one its opening names).
#   src/        rlt__ (the core both fronts share), and the public rlt_ API of include/
#   preload/    rlt_pre_, the hooks of exports.map, and real_<fn> (the real functions)
#   tools/launcher/ rlt_cli_, and main
#   preload/nolibc/ (the freestanding build, $BUILD/trap/) rlt_trap_, and the C library's own
#               names it stands in for, each listed below: nothing else may take a libc name
# Names are checked with nm, on the objects the build made ($BUILD, build by default). And the
# tree tracks no build output.
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
bad=0
say() { echo "layering: $*"; bad=1; }

for d in src preload tools/launcher; do
	ls "$BUILD/$d"/*.o >/dev/null 2>&1 || { say "no objects in $BUILD/$d (build first)"; continue; }
done
[ "$bad" -eq 0 ] || exit 1

# The public names: declared in include/rlthrottle.h.
public=$(grep -oE '\brlt_[a-z0-9_]+[[:space:]]*\(' include/rlthrottle.h | tr -d ' (\t' | sort -u)
# The hooks: the global names of the preload's version script.
hooks=$(sed -n '/global:/,/local:/p' preload/exports.map | tr ';' '\n' | tr -d ' \t' |
	grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u)

in_list() { printf '%s\n' "$2" | grep -qxF "$1"; }

# The C library subset the in-process handler links (preload/nolibc/): the names it defines,
# which are the C library's by necessity (the core and the hooks call them by those names).
libc_names="__chk_fail __errno_location access aligned_alloc atexit bcmp calloc clock_gettime clock_nanosleep
closedir environ fchmod flock free fstat ftruncate getenv geteuid getpeername getpid getrlimit
htonl htons ntohl ntohs
getsockname gettid inet_ntop inet_pton kill lstat malloc memchr memcmp memcpy memmove
memset mmap mprotect munmap nanosleep open opendir poll ppoll pthread_atfork
posix_fallocate pread pwrite pthread_mutex_consistent pthread_mutex_destroy pthread_mutex_init pthread_mutex_lock
pthread_mutex_unlock pthread_mutexattr_destroy pthread_mutexattr_init pthread_mutexattr_setpshared
pthread_mutexattr_setrobust pthread_mutexattr_settype pthread_once raise readdir realloc shm_open
setsockopt shm_unlink sigaction sigemptyset signal snprintf stat strchr strcmp strcpy strcspn strerror strlen
strncmp strnlen strrchr strspn strstr strtol strtoull syscall unlink vsnprintf"
libc_names=$(printf '%s\n' $libc_names)

all=$(mktemp) || exit 2
trap 'rm -f "$all"' EXIT
for d in src preload tools/launcher; do
	for sym in $(nm -g --defined-only "$BUILD/$d"/*.o 2>/dev/null | awk 'NF == 3 { print $3 }' |
		sort -u); do
		echo "$sym $d" >>"$all"
		case "$d:$sym" in
		src:rlt__*) ;;
		src:rlt_*) in_list "$sym" "$public" || say "src/ defines $sym: not in include/rlthrottle.h" ;;
		preload:rlt_pre_* | preload:real_*) ;;
		preload:*) in_list "$sym" "$hooks" || say "preload/ defines $sym: not rlt_pre_, not a hook" ;;
		tools/launcher:rlt_cli_* | tools/launcher:main) ;;
		*) say "$d/ defines $sym: not its folder's prefix" ;;
		esac
	done
done
# The freestanding build's own objects: nolibc, and real_sys.c (real_<fn>, as real.c).
ls "$BUILD"/trap/preload/nolibc/*.o >/dev/null 2>&1 || say "no objects in $BUILD/trap/preload/nolibc (make trap-elf)"
for sym in $(nm -g --defined-only "$BUILD"/trap/preload/nolibc/*.o 2>/dev/null | awk 'NF == 3 { print $3 }' |
	sort -u); do
	echo "$sym preload/nolibc" >>"$all"
	case "$sym" in
	rlt_trap_*) ;;
	*) in_list "$sym" "$libc_names" || say "preload/nolibc/ defines $sym: not rlt_trap_, not in the list of C library names" ;;
	esac
done
for sym in $(nm -g --defined-only "$BUILD"/trap/preload/real_sys.o 2>/dev/null | awk 'NF == 3 { print $3 }'); do
	case "$sym" in
	real_* | rlt_pre_real_*) ;;
	*) say "preload/real_sys.c defines $sym: not real_ or rlt_pre_real_" ;;
	esac
done

for sym in $(awk '{ print $1 }' "$all" | sort | uniq -d); do
	say "$sym is defined in: $(awk -v s="$sym" '$1 == s { print $2 "/" }' "$all" | tr '\n' ' ')"
done

# Includes: quoted includes name a header of the folder itself, of src/ or include/ (the -I of
# each folder in the Makefile); a path (../x.h, preload/x.h) would step around them.
# preload/nolibc/ sees only itself (it is below the core); real_sys.c, the freestanding build's
# real functions, sees its raw system calls; the system-call front's files (preload/trap*), built
# only freestanding, see the subset's headers.
for f in preload/nolibc/*.[ch]; do
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		[ -e "preload/nolibc/$h" ] || say "$f includes \"$h\": not in preload/nolibc/"
	done
done
for f in src/*.[ch] preload/*.[ch] tools/launcher/*.[ch]; do
	d=${f%/*}
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case "$h" in */*) say "$f includes \"$h\": a path, not a header of its layer"; continue ;; esac
		{ [ "$f" = preload/real_sys.c ] && [ "$h" = rawsys.h ]; } ||
		{ case $f in preload/trap*) [ -e "preload/nolibc/$h" ] ;; *) false ;; esac; } ||
		[ -e "$d/$h" ] || [ -e "src/$h" ] || [ -e "include/$h" ] ||
			say "$f includes \"$h\": not in $d/, src/ or include/"
	done
done

# One header per module: every function or variable a header of src/, preload/ (nolibc/) or
# tools/launcher/ declares is defined in the file of its name (X.h: X.c or X.S), or in a file
# its opening comment names (a small set for one purpose: engine.h's engines, net.h's three
# files), so that a name's declaration is found in the header named after its file.
defs=$(mktemp) || exit 2
nm -A -g --defined-only "$BUILD"/src/*.o "$BUILD"/preload/*.o "$BUILD"/tools/launcher/*.o \
	"$BUILD"/trap/src/*.o "$BUILD"/trap/preload/*.o "$BUILD"/trap/preload/nolibc/*.o 2>/dev/null |
	awk 'NF == 3 { f = $1; sub(/:.*/, "", f); sub(/.*\//, "", f); sub(/\.o$/, "", f); print $3, f }' |
	sort -u >"$defs"
for h in src/*.h preload/*.h preload/nolibc/*.h tools/launcher/*.h; do
	base=${h##*/}
	base=${base%.h}
	# the files the opening comment names
	named=$(awk 'NR == 1 && !/^\/\*/ { exit } { print } /\*\// { exit }' "$h" |
		grep -oE '[A-Za-z0-9_]+\.[cS]\b' | sed 's/\.[cS]$//' | sort -u)
	# declared: at the start of a line, not static, a typedef, a macro or a comment; the name
	# with the folder's prefix before "(", ";" or "[", not a struct's tag
	for n in $(awk '/^[ \t#\/*{}]/ || /^(static|typedef)/ { next }
		{ s = $0; while (match(s, /(struct |enum |union )?(rlt_[a-z0-9_]+|real_[a-z0-9_]+)[ \t]*[(;[]/)) {
			t = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
			if (t ~ /^(struct|enum|union) /) continue
			sub(/[ \t]*[(;[]$/, "", t); print t } }' "$h" | sort -u); do
		where=$(awk -v s="$n" '$1 == s { print $2 }' "$defs")
		[ -n "$where" ] || { say "$h declares $n: defined in no object"; continue; }
		ok=0
		for w in $where; do
			[ "$w" = "$base" ] && ok=1
			in_list "$w" "$named" && ok=1
		done
		[ "$ok" -eq 1 ] || say "$h declares $n, defined in $(echo $where | tr ' ' ','): not $base.c nor a file its opening names"
	done
done
rm -f "$defs"

# The tree holds no build output (a build folder of another name committed by mistake: a
# helper's build-clang/ once): nothing git tracks is an object, an archive or an ELF binary.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	for f in $(git ls-files); do
		case $f in *.o | *.a | *.so) say "tracked build output: $f"; continue ;; esac
		[ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' \n')" = "177ELF" ] &&
			say "tracked ELF binary: $f"
	done
fi

[ "$bad" -eq 0 ] && echo "layering: ok ($(wc -l <"$all") external names in 4 folders, no name in two)"
exit "$bad"
