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
# include/; each front sees its own folder and the core; the launcher sees the supervisor too
# (supervisor.h alone: tests/layering.sh checks it). INC is set per folder below.
CPPFLAGS_ALL = -D_GNU_SOURCE $(INC) $(CPPFLAGS)
INC_CORE     = -Iinclude -Isrc
INC          = $(INC_CORE)
CFLAGS_ALL   = -std=c11 $(WARN) $(OPT) $(SAN) -fPIC -fvisibility=hidden -pthread $(CFLAGS)
LDFLAGS_ALL  = $(SAN) -pthread $(LDFLAGS)

LIB_SRC     := $(sort $(wildcard src/*.c))
PRELOAD_SRC := $(sort $(wildcard preload/*.c))
SUP_SRC     := $(sort $(wildcard supervisor/*.c))
CLI_SRC     := $(sort $(wildcard launcher/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC   := $(sort $(wildcard tests/bench/bench_*.c))
ITEST_SRC   := $(sort $(wildcard tests/integration/*.c tests/reliability/*.c))

LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o)
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/%.o)
SUP_OBJ     := $(SUP_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ     := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN   := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
ITEST_BIN   := $(addprefix $(BUILD)/itest/,$(notdir $(ITEST_SRC:.c=)))

STATIC_LIB  := $(BUILD)/librlt.a
SHARED_LIB  := $(if $(PRELOAD_SRC),$(BUILD)/librlthrottle.so)
LAUNCHER    := $(if $(CLI_SRC),$(BUILD)/rlthrottle)

.PHONY: all test layering unit integration matrix matrix-rest reliability bench fuzz asan ubsan tsan clean \
	install install-strip uninstall install-check docs-check
all: $(STATIC_LIB) $(SHARED_LIB) $(LAUNCHER)

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
$(SUP_OBJ): INC = -Isupervisor -Isrc -Iinclude
$(CLI_OBJ): INC = -Ilauncher -Isupervisor -Isrc -Iinclude

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
$(BUILD)/launcher/main.o: $(LIBDIR_STAMP)
$(BUILD)/launcher/main.o: CPPFLAGS_ALL += -DRLT_LIBDIR=\"$(PKGLIBDIR)\"

# The supervisor's objects, for the launcher and for the unit tests of supervisor/ modules.
SUP_LIB := $(BUILD)/libsupervisor.a
$(SUP_LIB): $(SUP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/rlthrottle: $(CLI_OBJ) $(SUP_LIB) $(STATIC_LIB)
	$(CC) -o $@ $(CLI_OBJ) $(SUP_LIB) $(STATIC_LIB) $(LDFLAGS_ALL) -lseccomp

# UNIT_WRAP: functions a unit test stands in for (-Wl,--wrap: the test defines __wrap_NAME and
# reaches the real one as __real_NAME), set per test below.
# A unit test links only what it tests: the core (librlt.a); the tests of supervisor/ modules
# (SUP_UNIT) the supervisor's objects too, and see its folder.
SUP_UNIT := $(BUILD)/tests/test_timer_heap
$(SUP_UNIT): INC = -Isupervisor $(INC_CORE)
$(SUP_UNIT): UNIT_LIBS = $(SUP_LIB) $(STATIC_LIB) -lseccomp
$(SUP_UNIT): $(SUP_LIB)
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

test: layering install-check docs-check unit integration reliability

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

unit: $(UNIT_BIN)
	@sh tests/run-unit.sh $(UNIT_BIN)

# Each test runs once per front it declares (# fronts:), as NAME[preload] and NAME[seccomp];
# `integration` leaves out the seccomp runs of slow tests (# matrix-only:), `matrix` runs them all.
integration: all $(ITEST_BIN)
	@BUILD=$(BUILD) sh tests/run-integration.sh

matrix: all $(ITEST_BIN)
	@BUILD=$(BUILD) ITEST_MATRIX=1 sh tests/run-integration.sh

# what `make test` left of the matrix: make test then make matrix-rest is the whole matrix
matrix-rest: all $(ITEST_BIN)
	@BUILD=$(BUILD) ITEST_MATRIX=rest sh tests/run-integration.sh

# Everyday programs doing ordinary things (signals, subprocesses, fork beside threads, threads
# sharing a socket) under the preload and --seccomp: every byte exact, nothing hung.
reliability: all $(ITEST_BIN)
	@BUILD=$(BUILD) ITEST_SUITE=reliability sh tests/run-integration.sh

# A write() and read() that enter no kernel: the bench measures a hook alone against it.
$(BUILD)/bench/libnullsys.so: tests/bench/nullsys.c $(BUILD_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -shared -o $@ $< $(LDFLAGS_ALL)

bench: all $(BENCH_BIN) $(BUILD)/bench/libnullsys.so
	@BUILD=$(BUILD) sh tests/bench/run.sh $(BENCH_BIN)

# The sanitizer builds are test targets: the same tests, another build directory.
asan:
	$(MAKE) BUILD=build/asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" unit
ubsan:
	$(MAKE) BUILD=build/ubsan SAN="-fsanitize=undefined -fno-sanitize-recover=all" unit
# gcc warns that TSan does not model atomic_thread_fence (the seqlocks of publish.c and
# rule_set.c use one); the tests that race there use the atomics around it
TSAN_NOWARN := $(shell $(CC) -Werror -Wno-tsan -x c -c /dev/null -o /dev/null 2>/dev/null && echo -Wno-tsan)
tsan:
	$(MAKE) BUILD=build/tsan SAN="-fsanitize=thread $(TSAN_NOWARN)" OPT="-O1 -g" unit
	@# the supervisor's two threads, end to end (the timing gate of the file read is left out)
	TSAN_OPTIONS=halt_on_error=1 $(MAKE) BUILD=build/tsan SAN="-fsanitize=thread $(TSAN_NOWARN)" OPT="-O1 -g" \
		ITEST_FILTER=test_seccomp ITEST_EXCLUDE=fileread integration

# libFuzzer over the rule parser (clang only). FUZZ_SECONDS=60 by default.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS = -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -g -O1 -fsanitize=fuzzer,address,undefined
fuzz: $(BUILD)/fuzz/fuzz_rules
	@mkdir -p $(BUILD)/fuzz/corpus
	$(BUILD)/fuzz/fuzz_rules -max_total_time=$(FUZZ_SECONDS) -timeout=5 -max_len=4096 \
		-print_final_stats=1 $(BUILD)/fuzz/corpus tests/fuzz/corpus
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
		rlthrottle.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/rlthrottle.pc
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
-include $(wildcard $(BUILD)/src/*.d $(BUILD)/preload/*.d $(BUILD)/supervisor/*.d $(BUILD)/launcher/*.d \
	$(BUILD)/tests/*.d $(BUILD)/bench/*.d $(BUILD)/itest/*.d)
