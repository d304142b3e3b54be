/*
 * test_trap_load.c: the freestanding blob run in a process that did not build it, as the
 * launcher will run it in a static program: its PT_LOAD segments mapped at their fixed
 * addresses from the file, no loader, no relocation; its entry called on a trap stack with an
 * environment and auxv of our choosing. The blob here is rlthrottle-trap-probe.elf: the same
 * objects as rlthrottle-trap.elf plus trap_probe.c, whose entry is the probe.
 *
 * What it checks against this program's own (glibc) build of the core: the canonical form of
 * a parsed rule and a token bucket's decisions, identical; the clock between two of ours; a
 * send through the hook arriving whole; errno kept in the thread block, not in glibc's; a
 * redis:// rule loaded, and a bad rule refused at load with one line and status 125.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rlthrottle.h"
#include "trap_probe.h"
#include "trap_stack.h"

static int failures, checks;

#define CHECK(cond, ...)                                                                         \
	do {                                                                                     \
		checks++;                                                                        \
		if (!(cond)) {                                                                   \
			failures++;                                                              \
			fprintf(stderr, "test_trap_load:%d: ", __LINE__);                        \
			fprintf(stderr, __VA_ARGS__);                                            \
			fputc('\n', stderr);                                                     \
		}                                                                                \
	} while (0)

typedef void (*probe_fn)(struct rlt_probe *);

/* Maps every PT_LOAD of the ELF at path where it says; returns its entry point. */
static probe_fn map_blob(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	unsigned char *img;
	const Elf64_Ehdr *eh;

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		exit(2);
	}
	img = malloc((size_t)st.st_size);
	if (!img || read(fd, img, (size_t)st.st_size) != st.st_size)
		exit(2);
	close(fd);
	eh = (const Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_type != ET_EXEC) {
		fprintf(stderr, "%s: not an ET_EXEC\n", path);
		exit(2);
	}
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = ph->p_vaddr & ~(uintptr_t)4095;
		uintptr_t hi = (ph->p_vaddr + ph->p_memsz + 4095) & ~(uintptr_t)4095;
		void *m = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (m != (void *)lo) {
			fprintf(stderr, "%s: cannot map %#lx: %s\n", path, (unsigned long)lo,
			        strerror(errno));
			exit(2);
		}
		memcpy((void *)ph->p_vaddr, img + ph->p_offset, ph->p_filesz);
		mprotect(m, hi - lo, (ph->p_flags & PF_R ? PROT_READ : 0) |
		                             (ph->p_flags & PF_W ? PROT_WRITE : 0) |
		                             (ph->p_flags & PF_X ? PROT_EXEC : 0));
	}
	probe_fn entry = (probe_fn)(uintptr_t)eh->e_entry;
	free(img);
	return entry;
}

static unsigned long auxv[128];

static void read_auxv(void)
{
	int fd = open("/proc/self/auxv", O_RDONLY);
	if (fd < 0 || read(fd, auxv, sizeof auxv - 2 * sizeof auxv[0]) <= 0)
		exit(2);
	close(fd);
}

static probe_fn probe;

static void run_probe(void *arg)
{
	probe(arg);
}

/* Runs the probe on stk painted below the thread block; returns the bytes it used. */
static size_t run_measured(void *stk, struct rlt_probe *p)
{
	size_t untouched = sizeof(struct rlt_trap_thread);

	memset((char *)stk + untouched, 0xa5, RLT_TRAP_STACK - untouched);
	trap_stack_call(stk, run_probe, p);
	while (untouched < RLT_TRAP_STACK && ((unsigned char *)stk)[untouched] == 0xa5)
		untouched++;
	return RLT_TRAP_STACK - untouched;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The blob's load in a child, env its environment: the exit status, and stderr in line. A
 * load that goes through exits 0 when it found one RLT_SEND rule and turned the hooks on. */
static int load_in_child(const char *path, char **env, char *line, size_t cap)
{
	int pfd[2], st = 0;
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(pfd) != 0)
		exit(2);
	pid = fork();
	if (pid == 0) {
		static struct rlt_probe p = {.phase = 1, .rule = "1msg/s", .sock = -1};
		p.cfg.environ = env;
		p.cfg.auxv = auxv;
		dup2(pfd[1], 2);
		probe = map_blob(path);
		trap_stack_call(trap_stack_new(), run_probe, &p);
		_exit(p.active == 1 && p.send_rules == 1 ? 0 : 3);
	}
	close(pfd[1]);
	while (got < cap - 1 && (n = read(pfd[0], line + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	line[got] = '\0';
	close(pfd[0]);
	waitpid(pid, &st, 0);
	return st;
}

/* A redis:// rule loads in the blob as in the preload (the server is reached at the first
 * call that needs a lease, not at load); a bad rule ends the load with one line and 125. */
static void load_outcomes(const char *path)
{
	static char *redis[] = {"RLT_PUBLISH=0", "RLT_SEND=10B/s scope=redis://127.0.0.1:6379/x",
	                        NULL};
	static char *bad[] = {"RLT_PUBLISH=0", "RLT_SEND=10 per second", NULL};
	char line[1024];
	int st;

	st = load_in_child(path, redis, line, sizeof line);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a redis rule loads (status %#x): %s", st, line);
	st = load_in_child(path, bad, line, sizeof line);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 125, "a bad rule ends the load with 125 (status %#x)",
	      st);
	CHECK(strstr(line, "rlthrottle: ") == line && strstr(line, "RLT_SEND") &&
	      strchr(line, '\n') == line + strlen(line) - 1, "one line naming the variable: %s", line);
}

int main(int argc, char **argv)
{
	static char *env[] = {"RLT_PUBLISH=0", "RLT_SEND=1000B/s burst=1000", NULL};
	static struct rlt_probe p;
	struct rlt_rule rules[4];
	struct rlt_error err;
	size_t n = 0;
	char canon[512], got[16] = "";
	int sv[2];
	void *stk;

	if (argc != 2) {
		fprintf(stderr, "usage: test_trap_load BLOB.elf\n");
		return 2;
	}
	read_auxv();
	load_outcomes(argv[1]);

	probe = map_blob(argv[1]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || !(stk = trap_stack_new()))
		return 2;
	p.cfg.environ = env;
	p.cfg.auxv = auxv;
	p.rule = "10msg/s burst=5";
	p.t0 = 1000000000000ull;
	p.sock = sv[0];
	errno = 0;
	/* the load, then the calls, each on a painted stack: how deep each goes */
	p.phase = 1;
	size_t load_depth = run_measured(stk, &p);
	p.phase = 2;
	uint64_t before = now_ns();
	size_t call_depth = run_measured(stk, &p);
	uint64_t after = now_ns();
	int glibc_errno = errno;

	printf("test_trap_load: stack used: the load %zu bytes, a parse, 8 decisions and a send %zu "
	       "bytes (of %d)\n", load_depth, call_depth, RLT_TRAP_STACK);
	CHECK(load_depth <= RLT_TRAP_STACK - 8192 && call_depth <= RLT_TRAP_STACK / 2,
	      "stack: the load %zu, the calls %zu bytes of %d", load_depth, call_depth,
	      RLT_TRAP_STACK);
	CHECK(p.rc == 0, "probe failed at step %d: %s", p.rc, p.msg);
	CHECK(p.self_ok, "rlt_trap_self is the base of the 64 KiB stack");
	CHECK(p.active == 1 && p.send_rules == 1, "the load found RLT_SEND (active %d, rules %u)",
	      p.active, p.send_rules);

	/* the same rule through this program's build of the core */
	CHECK(rlt_rules_parse(RLT_VAR_SEND, p.rule, rules, 4, &n, &err) == 0 && n == 1, "parse");
	rlt_rule_format(&rules[0], canon, sizeof canon);
	CHECK(!strcmp(canon, p.msg), "canonical form: glibc build \"%s\", blob \"%s\"", canon, p.msg);
	void *state = aligned_alloc(64, (rlt_state_size(&rules[0].params) + 63) / 64 * 64);
	rlt_state_init(&rules[0].params, state, 0);
	int go = 0;
	for (int i = 0; i < PROBE_DECISIONS; i++) {
		rlt_ns_t at = 0;
		int v = (int)rlt_decide(&rules[0].params, state, p.t0, 1, RLT_MODE_NOW, &at);
		CHECK(v == p.verdict[i] && at == p.at[i], "decision %d: glibc build %d at %llu, blob %d at %llu",
		      i, v, (unsigned long long)at, p.verdict[i], (unsigned long long)p.at[i]);
		go += p.verdict[i] == RLT_GO;
	}
	free(state);
	/* a burst of 5 at 10/s: five go at t0, the sixth conforms 100 ms later */
	CHECK(go == 5 && p.verdict[5] == RLT_DENY && p.at[5] == p.t0 + 100000000ull,
	      "token bucket: %d went, the 6th %d at t0 + %lld ns", go, p.verdict[5],
	      (long long)(p.at[5] - p.t0));

	CHECK(before <= p.now && p.now <= after, "the blob's clock %llu within [%llu, %llu]",
	      (unsigned long long)p.now, (unsigned long long)before, (unsigned long long)after);
	CHECK(p.sent == 10 && read(sv[1], got, sizeof got) == 10 && !memcmp(got, "0123456789", 10),
	      "a send through the hook: %ld bytes", p.sent);
	CHECK(p.close_errno == EBADF && trap_stack_block(stk)->err == EBADF,
	      "close(-1): EBADF in the thread block (got %d)", p.close_errno);
	CHECK(glibc_errno == 0, "glibc's errno untouched by the blob (%d)", glibc_errno);

	printf("test_trap_load: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
