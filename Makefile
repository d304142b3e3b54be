# rlthrottle: one non-recursive Makefile (the sanitizer targets re-run it with another BUILD dir).
# Local overrides go in config.mak (not tracked).
-include config.mak

CC      ?= cc
# Where `make install` puts things (GNU names; DESTDIR is a staging root prefixed to each).
# LIBDIR is multiarch-ready: the Debian package passes /usr/lib/$(DEB_HOST_MULTIARCH). The
# preload library goes in a directory of its own under it (PKGLIBDIR): it is loaded by path,
# never linked against, so it has no versioned soname and stays out of the linker's path.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
PKGLIBDIR  ?= $(LIBDIR)/rlthrottle
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL    ?= install
STRIP      ?= strip
BUILD   ?= build
OPT     ?= -O2 -g
SAN     ?=

WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# The include path of each folder holds the layering: src/ (the core) sees only itself and
# include/; each front sees its own folder and the core (tests/layering.sh checks it). INC is set
# per folder below.
CPPFLAGS_ALL = -D_GNU_SOURCE $(INC) $(CPPFLAGS)
INC_CORE     = -Iinclude -Isrc
INC          = $(INC_CORE)
CFLAGS_ALL   = -std=c11 $(WARN) $(OPT) $(SAN) -fPIC -fvisibility=hidden -pthread $(CFLAGS)
LDFLAGS_ALL  = $(SAN) -pthread $(LDFLAGS)

LIB_SRC     := $(sort $(wildcard src/*.c))
# trap_*.c and real_sys.c are the system-call front's (see trap-elf)
PRELOAD_SRC := $(filter-out preload/trap_% preload/real_sys.c,$(sort $(wildcard preload/*.c)))
CLI_SRC     := $(sort $(wildcard tools/launcher/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC   := $(sort $(wildcard tests/bench/bench_*.c))
ITEST_SRC   := $(sort $(wildcard tests/integration/*.c tests/reliability/*.c))

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ     := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN   := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
ITEST_BIN   := $(addprefix $(BUILD)/itest/,$(notdir $(ITEST_SRC:.c=)))

STATIC_LIB  := $(BUILD)/librlt.a
SHARED_LIB  := $(if $(PRELOAD_SRC),$(BUILD)/librlthrottle.so)
LAUNCHER    := $(if $(CLI_SRC),$(BUILD)/rlthrottle)

.PHONY: all trap-elf trap-test test test-build layering unit integration matrix matrix-rest reliability bench fuzz \
	asan ubsan tsan clean install install-strip uninstall install-check docs-check
all: $(STATIC_LIB) $(SHARED_LIB) $(LAUNCHER) trap-elf

# Each compile writes the headers it read into a .d file beside its output (-MMD; -MP adds an
# empty rule per header, so that a header removed or renamed does not stop the build); the
# includes at the end make an object depend on exactly those headers.
DEPFLAGS = -MMD -MP

# Objects remember the compiler and flags they were built with: `CC=clang make test` after a
# gcc build rebuilds everything instead of linking gcc objects into a "clang" test. DEPFLAGS
# is part of it so that a build directory made before there were .d files is rebuilt once,
# rather than kept with no header dependencies at all.
BUILD_ID := $(CC) $(DEPFLAGS) $(OPT) $(SAN) $(CFLAGS) $(CPPFLAGS)
BUILD_STAMP := $(BUILD)/.build-id
$(shell mkdir -p $(BUILD) && (echo '$(BUILD_ID)' | cmp -s - $(BUILD_STAMP) || \
	echo '$(BUILD_ID)' > $(BUILD_STAMP)))

$(PRELOAD_OBJ): INC = -Ipreload -Isrc -Iinclude
$(CLI_OBJ): INC = -Itools/launcher -Isrc -Iinclude

$(BUILD)/%.o: %.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# Only the hook symbols leave the shared object: everything is built hidden, the hooks are
# marked RLT_EXPORT, and the version script makes all else local.
$(BUILD)/librlthrottle.so: $(PRELOAD_OBJ) $(LIB_OBJ) preload/exports.map
	$(CC) -shared -Wl,-soname,librlthrottle.so -Wl,--version-script=preload/exports.map \
		-Wl,-z,now -Wl,-z,relro -o $@ $(PRELOAD_OBJ) $(LIB_OBJ) $(LDFLAGS_ALL) -ldl

# The launcher finds the library beside itself (the build tree) or in PKGLIBDIR, compiled in.
# The path is remembered like the flags: `make` then `make install PREFIX=/usr` rebuilds
# main.o with /usr's path rather than install a launcher that looks in /usr/local.
LIBDIR_STAMP := $(BUILD)/.pkglibdir
$(shell mkdir -p $(BUILD) && (echo '$(PKGLIBDIR)' | cmp -s - $(LIBDIR_STAMP) || \
	echo '$(PKGLIBDIR)' > $(LIBDIR_STAMP)))
$(BUILD)/tools/launcher/main.o: $(LIBDIR_STAMP)
$(BUILD)/tools/launcher/main.o: CPPFLAGS_ALL += -DRLT_LIBDIR=\"$(PKGLIBDIR)\"

# ----- The in-process handler's code (issue 21): the core and the hooks built a second way ---
# No C library: preload/nolibc/ is the subset they call, made of raw system calls; real_sys.c
# stands for real.c; src/hiredis_nolibc.c for hiredis_dl.c (the Redis connect). Linked into one static ELF
# whose every PT_LOAD lies in [TRAP_BASE, TRAP_BASE + 64 MiB), mapped there by the launcher.
# -fpie, not -fno-pic: -fno-pic code assumes its addresses fit in 32 bits (the small code
# model), which TRAP_BASE does not; -fpie code is RIP-relative and -static -no-pie links it at
# one fixed address. Builtins stay on for the core and the hooks (their code is the preload's:
# small copies inlined); nolibc itself is -ffreestanding, so that a loop in memset is never
# turned into a call to memset. No -mno-red-zone: the kernel skips the red zone when it puts a
# signal frame on a stack, ours included. nolibc.h is pre-included: the core's per-thread
# variables (redis_client.h, engine_lock.h) and errno live in the thread block it defines.
TRAP_BASE   := 0x5a5a00000000
TRAP_ELF    := $(BUILD)/rlthrottle-trap.elf
TRAP_CORE_SRC := $(filter-out src/hiredis_dl.c,$(LIB_SRC))
TRAP_PRE_SRC  := $(filter-out preload/real.c preload/init.c preload/hook_exec.c preload/hook_stdio.c,$(sort $(wildcard preload/*.c))) \
	preload/trap_entry.S
NOLIBC_SRC    := $(sort $(wildcard preload/nolibc/*.c))
TRAP_CORE_OBJ := $(TRAP_CORE_SRC:%.c=$(BUILD)/trap/%.o)
TRAP_PRE_OBJ  := $(patsubst %.S,$(BUILD)/trap/%.o,$(TRAP_PRE_SRC:%.c=$(BUILD)/trap/%.o))
NOLIBC_OBJ    := $(NOLIBC_SRC:%.c=$(BUILD)/trap/%.o)
TRAP_OBJ      := $(TRAP_CORE_OBJ) $(TRAP_PRE_OBJ) $(NOLIBC_OBJ)
# Its own optimisation, whatever OPT says (the Debian build empties OPT for dpkg-buildflags' CFLAGS,
# which are the C library's hardening and never reach this build): at -O0 its stacks would not
# hold a call, nor its hot path keep the preload's cost.
TRAP_OPT ?= -O2 -g
TRAP_CFLAGS = -std=c11 $(WARN) $(TRAP_OPT) -DRLT_NOLIBC -D_GNU_SOURCE -U_FORTIFY_SOURCE \
	-include preload/nolibc/nolibc.h -fpie -fvisibility=hidden -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-unwind-tables -fcf-protection=none \
	-ftls-model=local-exec
TRAP_LDFLAGS = -nostdlib -static -no-pie -Wl,-Ttext-segment=$(TRAP_BASE) -Wl,-z,noexecstack \
	-Wl,-z,norelro -Wl,-z,max-page-size=4096 -Wl,--build-id=none -Wl,-e,$(TRAP_ENTRY)
TRAP_ENTRY = rlt_trap_start
$(TRAP_CORE_OBJ): TRAP_INC = -Iinclude -Isrc
$(TRAP_PRE_OBJ): TRAP_INC = -Ipreload -Ipreload/nolibc -Isrc -Iinclude
$(NOLIBC_OBJ): TRAP_INC = -Ipreload/nolibc
# gcc turns a byte loop into a call to memset or memcpy even freestanding, unless told not to
# (clang's -ffreestanding is enough)
NOLIBC_NODIST := $(shell $(CC) -Werror -fno-tree-loop-distribute-patterns -x c -c /dev/null \
	-o /dev/null 2>/dev/null && echo -fno-tree-loop-distribute-patterns)
$(NOLIBC_OBJ): TRAP_CFLAGS += -ffreestanding $(NOLIBC_NODIST)
$(BUILD)/trap/%.o: %.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(TRAP_INC) $(TRAP_CFLAGS) -c $< -o $@
$(BUILD)/trap/%.o: %.S $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) -c $< -o $@

trap-elf: $(TRAP_ELF)
$(TRAP_ELF): $(TRAP_OBJ)
	$(CC) $(TRAP_LDFLAGS) -o $@ $(TRAP_OBJ) -lgcc

# Its tests (tests/trap/, part of make test): the blob's shape (check_elf.sh); the subset against
# glibc in a hosted program, linked with its symbols renamed nl_<name>; and the blob run by a
# loader of our own, with a probe entry linked into a copy of it (rlthrottle-trap-probe.elf).
TRAP_TEST := $(BUILD)/trap/tests
NOLIBC_NL := $(patsubst $(BUILD)/trap/preload/nolibc/%.o,$(BUILD)/trap/nl/%.o,\
	$(filter-out %/start.o,$(NOLIBC_OBJ)))
$(BUILD)/trap/nl/%.o: $(BUILD)/trap/preload/nolibc/%.o
	@mkdir -p $(dir $@)
	objcopy --prefix-symbols=nl_ $< $@
$(TRAP_TEST)/test_nolibc: tests/trap/test_nolibc.c $(NOLIBC_NL) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) -D_GNU_SOURCE -Ipreload/nolibc -Itests/trap -std=c11 $(WARN) $(OPT) \
		-pthread -o $@ $< $(NOLIBC_NL) -pthread
$(BUILD)/trap/tests/trap/trap_probe.o: TRAP_INC = -Itests/trap -Ipreload -Ipreload/nolibc -Isrc -Iinclude
$(TRAP_TEST)/rlthrottle-trap-probe.elf: TRAP_ENTRY = rlt_trap_probe
$(TRAP_TEST)/rlthrottle-trap-probe.elf: $(TRAP_OBJ) $(BUILD)/trap/tests/trap/trap_probe.o
	@mkdir -p $(dir $@)
	$(CC) $(TRAP_LDFLAGS) -o $@ $^ -lgcc
$(TRAP_TEST)/test_trap_load: tests/trap/test_trap_load.c $(STATIC_LIB) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(CPPFLAGS_ALL) -Ipreload/nolibc -Itests/trap $(CFLAGS_ALL) -o $@ $< \
		$(STATIC_LIB) $(LDFLAGS_ALL)
TRAP_TEST_BIN := $(TRAP_ELF) $(TRAP_TEST)/test_nolibc $(TRAP_TEST)/rlthrottle-trap-probe.elf \
	$(TRAP_TEST)/test_trap_load
trap-test: $(TRAP_TEST_BIN)
	@sh tests/trap/check_elf.sh $(TRAP_ELF) $(TRAP_BASE)
	@$(TRAP_TEST)/test_nolibc
	@$(TRAP_TEST)/test_trap_load $(TRAP_TEST)/rlthrottle-trap-probe.elf

# The launcher carries the handler's ELF (trap_blob.S), so that they come from one build.
$(BUILD)/tools/launcher/trap_blob.o: tools/launcher/trap_blob.S $(TRAP_ELF)
	@mkdir -p $(dir $@)
	$(CC) -DRLT_TRAP_ELF='"$(TRAP_ELF)"' -c $< -o $@
$(BUILD)/rlthrottle: $(CLI_OBJ) $(BUILD)/tools/launcher/trap_blob.o $(STATIC_LIB)
	$(CC) -o $@ $(CLI_OBJ) $(BUILD)/tools/launcher/trap_blob.o $(STATIC_LIB) $(LDFLAGS_ALL) -lseccomp

# UNIT_WRAP: functions a unit test stands in for (-Wl,--wrap: the test defines __wrap_NAME and
# reaches the real one as __real_NAME), set per test below.
# A unit test links only what it tests: the core (librlt.a); the tests of tools/launcher/ modules
# their objects too, and see its folder.
# the injector's blob checks (tools/launcher/inject_image.c)
CLI_UNIT := $(BUILD)/tests/test_inject_blob
$(CLI_UNIT) $(BUILD)/tests/test_trap_filter: INC = -Itools/launcher $(INC_CORE)
$(CLI_UNIT): UNIT_LIBS = $(BUILD)/tools/launcher/inject_image.o $(STATIC_LIB)
$(CLI_UNIT): $(BUILD)/tools/launcher/inject_image.o
# the system-call front's filter, run by an interpreter (tools/launcher/trap_filter.c)
$(BUILD)/tests/test_trap_filter: UNIT_LIBS = $(BUILD)/tools/launcher/trap_filter.o $(STATIC_LIB) -lseccomp
$(BUILD)/tests/test_trap_filter: $(BUILD)/tools/launcher/trap_filter.o
UNIT_LIBS = $(STATIC_LIB)
$(BUILD)/tests/%: tests/unit/%.c $(STATIC_LIB) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(UNIT_LIBS) \
		$(LDFLAGS_ALL) $(UNIT_WRAP:%=-Wl,--wrap=%) -lcmocka -ldl -lm
$(BUILD)/tests/test_wait: UNIT_WRAP = clock_nanosleep

$(BUILD)/bench/%: tests/bench/%.c $(STATIC_LIB) $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(DEPFLAGS) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $< $(STATIC_LIB) $(LDFLAGS_ALL) -lm

# The integration helpers are fixtures, not what is under test: built without the sanitizer
# (TSan, for one, runs a signal handler late, which the signal tests measure).
# tests/reliability/ holds the helpers of the reliability suite (issue 9); they share itest.h.
ITEST_CC = $(CC) $(DEPFLAGS) $(CPPFLAGS_ALL) -Itests/integration $(filter-out $(SAN),$(CFLAGS_ALL)) -o $@ $< \
	$(filter-out $(SAN),$(LDFLAGS_ALL))
$(BUILD)/itest/%: tests/integration/%.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(ITEST_CC)
$(BUILD)/itest/%: tests/reliability/%.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(ITEST_CC)

# The injector's fixtures (issue 21): the minimal handler blob (freestanding, linked in the
# blob's window RLT_INJECT_BASE of src/inject_proto.h), the injector's driver (injectrun: the
# injector alone, until the launcher uses it), and static programs to inject into.
INJ_BIN := $(BUILD)/itest/injectrun $(BUILD)/itest/trapblob_min $(BUILD)/itest/trapprog \
	$(BUILD)/itest/trapprog_taken
BLOB_FLAGS = -std=c11 $(WARN) -O2 -ffreestanding -nostdlib -static -fpie \
	-fno-stack-protector -fno-asynchronous-unwind-tables -Wl,-Ttext-segment=0x5a5a00000000 \
	-Wl,-e,rlt_blob_entry -Wl,--build-id=none -Isrc -Ipreload -Ipreload/nolibc -Itests/inject
$(BUILD)/itest/trapblob_min: tests/inject/trapblob_min.c tests/inject/trapblob_min.h \
		src/inject_proto.h preload/trap_exec.h preload/nolibc/rawsys.h $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(BLOB_FLAGS) -o $@ $<
INJECT_OBJ := $(BUILD)/tools/launcher/inject.o $(BUILD)/tools/launcher/inject_image.o
$(BUILD)/itest/injectrun: tests/inject/injectrun.c tests/inject/trapblob_min.h $(INJECT_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -D_GNU_SOURCE -Itools/launcher -Isrc -Iinclude -Itests/inject $(CFLAGS_ALL) -o $@ $< \
		$(INJECT_OBJ) $(LDFLAGS_ALL)
$(BUILD)/itest/trapprog: tests/inject/trapprog.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -static -o $@ $<
# the same program linked where the blob goes: the injection must fail cleanly (EEXIST)
$(BUILD)/itest/trapprog_taken: tests/inject/trapprog.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -DTAKEN $(WARN) -O2 -static -Wl,--section-start=.taken=0x5a5a00000000 \
		-o $@ $<

# make test: the stages below, each a run of the integration runner beside the integration and
# reliability tests (tests/run-integration.sh: the rate tests two at a time, the tests that
# measure no rate, # parallel-safe, beside them; the unit tests, some of which time a wake-up,
# counted as a rate run). Everything is built first, so that no two stages build one file:
# TEST_JOBS compiles at once (2, the cores of the CI machine) when make was given no -j of its
# own, since CI runs a plain `make test` and a serial build was a fifth of its time.
# (The runner's MAKE through another name: a recipe that names $(MAKE) runs even under make -n
# or -q, which is right for the build and not for the tests.)
TEST_MAKE = $(MAKE)
TEST_JOBS ?= 2
test-build: all $(UNIT_BIN) $(ITEST_BIN) $(INJ_BIN) $(TRAP_TEST_BIN)
test:
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS)) test-build
	@BUILD=$(BUILD) MAKE="$(TEST_MAKE)" ITEST_SUITE="integration reliability" \
		ITEST_STAGES="layering trap-test install-check docs-check" ITEST_RATE_STAGES=unit \
		sh tests/run-integration.sh

# The README, the man pages and --help name the same variables, rule keys and options; the man
# pages format without a groff warning (tests/docs_consistency.sh).
docs-check: all
	@BUILD=$(BUILD) sh tests/docs_consistency.sh

# make install, install-strip, uninstall and clean, into a staging root (tests/install.sh).
install-check: all
	@BUILD=$(BUILD) MAKE="$(MAKE)" sh tests/install.sh

# No internal name defined in two folders, each with its folder's prefix; each folder includes
# only what its layer may.
layering: all
	@BUILD=$(BUILD) sh tests/layering.sh

# UNIT=test_wait (or several, space-separated) runs only those unit tests
UNIT_RUN = $(if $(UNIT),$(addprefix $(BUILD)/tests/,$(UNIT)),$(UNIT_BIN))
unit: $(UNIT_RUN)
	@sh tests/run-unit.sh $(UNIT_RUN)

# Each test runs once per front it declares (# fronts:), as NAME[preload] and NAME[seccomp];
# `integration` leaves out the seccomp runs of slow tests (# matrix-only:), `matrix` runs them all.
integration: all $(ITEST_BIN) $(INJ_BIN)
	@BUILD=$(BUILD) sh tests/run-integration.sh

matrix: all $(ITEST_BIN) $(INJ_BIN)
	@BUILD=$(BUILD) ITEST_MATRIX=1 sh tests/run-integration.sh

# what `make test` left of the matrix: make test then make matrix-rest is the whole matrix
matrix-rest: all $(ITEST_BIN) $(INJ_BIN)
	@BUILD=$(BUILD) ITEST_MATRIX=rest sh tests/run-integration.sh

# Everyday programs doing ordinary things (signals, subprocesses, fork beside threads, threads
# sharing a socket) under the preload and --seccomp: every byte exact, nothing hung.
reliability: all $(ITEST_BIN) $(INJ_BIN)
	@BUILD=$(BUILD) ITEST_SUITE=reliability sh tests/run-integration.sh

# A write() and read() that enter no kernel: the bench measures a hook alone against it.
$(BUILD)/bench/libnullsys.so: tests/bench/nullsys.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -shared -o $@ $< $(LDFLAGS_ALL)

# The network-conditions part (tests/bench/net.sh): a timed ping-pong client and the delaying
# relay it compares rlthrottle's latency with where the kernel has no netem.
NET_BENCH_BIN := $(BUILD)/bench/rtt_ping $(BUILD)/bench/delay_relay $(BUILD)/itest/pingpong \
	$(BUILD)/itest/callcost

bench: all $(BENCH_BIN) $(BUILD)/bench/libnullsys.so $(INJ_BIN) $(NET_BENCH_BIN)
	@BUILD=$(BUILD) sh tests/bench/run.sh $(BENCH_BIN)

# The sanitizer builds are test targets: the same tests, another build directory.
asan:
	$(MAKE) BUILD=build/asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" unit
ubsan:
	$(MAKE) BUILD=build/ubsan SAN="-fsanitize=undefined -fno-sanitize-recover=all" unit
# gcc warns that TSan does not model atomic_thread_fence (the seqlocks of publish.c and
# rule_set.c use one); the tests that race there use the atomics around it
TSAN_NOWARN := $(shell $(CC) -Werror -Wno-tsan -x c -c /dev/null -o /dev/null 2>/dev/null && echo -Wno-tsan)
# The unit tests alone: the threads that race are the core's (the unit tests of charge, conns,
# keytab and the engines run them). The launcher has one thread, and the --seccomp handler is
# built without the C library, so no TSan runtime can run inside it.
tsan:
	$(MAKE) BUILD=build/tsan SAN="-fsanitize=thread $(TSAN_NOWARN)" OPT="-O1 -g" unit

# libFuzzer over the rule parser and the RLT_NET parser (clang only). FUZZ_SECONDS=60 by default.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -g -O1 -fsanitize=fuzzer,address,undefined
fuzz: $(BUILD)/fuzz/fuzz_rules $(BUILD)/fuzz/fuzz_net
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus_net
	$(BUILD)/fuzz/fuzz_rules -max_total_time=$(FUZZ_SECONDS) -timeout=5 -max_len=4096 \
		-print_final_stats=1 $(BUILD)/fuzz/corpus tests/fuzz/corpus
	$(BUILD)/fuzz/fuzz_net -max_total_time=$(FUZZ_SECONDS) -timeout=5 -max_len=4096 \
		-print_final_stats=1 $(BUILD)/fuzz/corpus_net tests/fuzz/corpus_net
$(BUILD)/fuzz/fuzz_net: tests/fuzz/fuzz_net.c $(LIB_SRC) $(wildcard include/*.h src/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_net.c $(LIB_SRC) -pthread
$(BUILD)/fuzz/fuzz_rules: tests/fuzz/fuzz_rules.c $(LIB_SRC) $(wildcard include/*.h src/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_rules.c $(LIB_SRC) -pthread

# Binaries are installed as built (with their debug information: the Debian package's dh_strip
# moves it to the dbgsym package); install-strip strips them.
install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGLIBDIR) \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7
	$(INSTALL) -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 include/rlthrottle.h $(DESTDIR)$(INCLUDEDIR)/
	$(INSTALL) -m 644 man/rlthrottle.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 man/rlthrottle.7 $(DESTDIR)$(MANDIR)/man7/
	sed -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(shell sed -n 's/^#define RLT_VERSION "\(.*\)"/\1/p' include/rlthrottle.h)|' \
		include/rlthrottle.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/rlthrottle.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/rlthrottle.pc
	$(if $(SHARED_LIB),$(INSTALL) -m 644 $(SHARED_LIB) $(DESTDIR)$(PKGLIBDIR)/)
	$(if $(LAUNCHER),$(INSTALL) -m 755 $(LAUNCHER) $(DESTDIR)$(BINDIR)/)

install-strip: install
	$(if $(LAUNCHER),$(STRIP) --strip-unneeded $(DESTDIR)$(BINDIR)/rlthrottle)
	$(if $(SHARED_LIB),$(STRIP) --strip-unneeded $(DESTDIR)$(PKGLIBDIR)/librlthrottle.so)
	$(STRIP) --strip-debug $(DESTDIR)$(LIBDIR)/librlt.a

# What install wrote, and the directories of our own it made (the others are left).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rlthrottle $(DESTDIR)$(PKGLIBDIR)/librlthrottle.so \
		$(DESTDIR)$(LIBDIR)/librlt.a $(DESTDIR)$(INCLUDEDIR)/rlthrottle.h \
		$(DESTDIR)$(PKGCONFIGDIR)/rlthrottle.pc $(DESTDIR)$(MANDIR)/man1/rlthrottle.1 \
		$(DESTDIR)$(MANDIR)/man7/rlthrottle.7
	rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null || true

clean:
	rm -rf $(BUILD)

# The header dependencies of everything built so far (none yet in a fresh tree: then everything
# is built anyway).
-include $(wildcard $(BUILD)/trap/tests/*.d $(BUILD)/trap/tests/trap/*.d $(BUILD)/trap/src/*.d $(BUILD)/trap/preload/*.d $(BUILD)/trap/preload/nolibc/*.d \
	$(BUILD)/src/*.d $(BUILD)/preload/*.d $(BUILD)/tools/launcher/*.d \
	$(BUILD)/tests/*.d $(BUILD)/bench/*.d $(BUILD)/itest/*.d)
