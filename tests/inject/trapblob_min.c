/* A minimal handler blob for the injector's tests and benchmarks (issue 21, "start by
 * measuring"): a freestanding static ELF linked at RLT_INJECT_BASE whose init installs a SIGSYS
 * handler and, in the command's first image, a filter that traps getppid, sendto, write on an
 * fd >= 512, rt_sigprocmask, rt_sigaction, execve, execveat and exit_group unless they come
 * from the blob's window. The handler only counts and makes the call itself, except:
 *   rt_sigprocmask  answered by rewriting the mask the kernel restores at rt_sigreturn, SIGSYS
 *                   left out (a trapped call with SIGSYS blocked kills the process);
 *   rt_sigaction    SIGSYS stripped from sa_mask; the program's own SIGSYS action kept aside;
 *   execve(at)      asks the launcher to attach first (preload/trap_exec.h), -EPERM if it cannot;
 *   exit_group      appends "trapblob pid=... counts..." to the config's report file first.
 * Built with -ffreestanding -nostdlib -static -fno-pic (tests/inject/, see the Makefile). */
#include "inject_proto.h"
#include "trap_exec.h"
#include "trapblob_min.h"

#include <stddef.h>
#include <stdint.h>

#define NR_WRITE 1
#define NR_OPENAT 257
#define NR_RT_SIGACTION 13
#define NR_RT_SIGPROCMASK 14
#define NR_RT_SIGRETURN 15
#define NR_GETPID 39
#define NR_SENDTO 44
#define NR_EXECVE 59
#define NR_GETPPID 110
#define NR_GETTID 186
#define NR_EXIT_GROUP 231
#define NR_READLINKAT 267
#define NR_EXECVEAT 322
#define NR_SECCOMP 317
#define NR_PRCTL 157

#define SIGSYS_ 31
#define SIGSYS_BIT (1ULL << (SIGSYS_ - 1))
#define UNBLOCKABLE ((1ULL << 8) | (1ULL << 18)) /* SIGKILL, SIGSTOP */

#define sys rlt_trap_sys

void rlt_blob_entry(void);
long rlt_blob_init(struct rlt_inject_hdr *cfg);

/* The kernel's sigaction and ucontext on x86-64 (not glibc's). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};
struct kucontext {
	unsigned long uc_flags;
	void *uc_link;
	void *ss_sp;
	int ss_flags;
	unsigned long ss_size;
	/* struct sigcontext: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, ... */
	uint64_t gregs[23];
	uint64_t fpstate, reserved[8];
	uint64_t sigmask;
};
_Static_assert(offsetof(struct kucontext, gregs) == 40, "ucontext layout");
_Static_assert(offsetof(struct kucontext, sigmask) == 296, "ucontext layout");
enum { R8, R9, R10, R11, R12, R13, R14, R15, RDI, RSI, RBP, RBX, RDX, RAX, RCX, RSP, RIP };

struct ksiginfo {
	int signo, errno_, code, pad;
	void *call_addr;
	int syscall;
	unsigned arch;
};

static struct rlt_inject_hdr *hdr;
static struct trapblob_cfg *bcfg;
static struct ksigaction kept_sigsys; /* the program's own SIGSYS action, never installed */
static unsigned long counts[512];

/* gcc may call these for struct copies even when freestanding */
void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *a = d;
	const unsigned char *b = s;
	while (n--)
		*a++ = *b++;
	return d;
}
void *memset(void *d, int c, size_t n)
{
	unsigned char *a = d;
	while (n--)
		*a++ = (unsigned char)c;
	return d;
}

/* The init's entry, entered as if called (rsp + 8 aligned to 16): the init, then an int3 that
 * hands its result (rax) to the injector. The push keeps the init's stack aligned. */
__asm__(".text\n.globl rlt_blob_entry\n.globl rlt_blob_restorer\n.hidden rlt_blob_restorer\n"
        "rlt_blob_entry:\n  push %rbp\n  call rlt_blob_init\n  int3\n"
        "rlt_blob_restorer:\n  mov $15, %eax\n  syscall\n  hlt\n");
__attribute__((visibility("hidden"))) void rlt_blob_restorer(void);

static size_t slen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

static char *put(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	return p;
}

static char *putu(char *p, unsigned long v)
{
	char b[24];
	int n = 0;
	do
		b[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 24);
	while (n)
		*p++ = b[--n];
	return p;
}

static void report(void)
{
	static const struct {
		int nr;
		const char *name;
	} names[] = {{NR_GETPPID, "getppid"}, {NR_WRITE, "write"}, {NR_SENDTO, "sendto"},
	             {NR_RT_SIGPROCMASK, "rt_sigprocmask"}, {NR_RT_SIGACTION, "rt_sigaction"},
	             {NR_EXECVE, "execve"}, {NR_EXIT_GROUP, "exit_group"}};
	char line[600], exe[200], *p = line;
	long n, fd;
	unsigned i;

	if (!bcfg || !bcfg->report[0])
		return;
	p = put(p, "trapblob pid=");
	p = putu(p, (unsigned long)sys(NR_GETPID, 0, 0, 0, 0, 0, 0));
	p = put(p, hdr->flags & RLT_INJECT_FIRST ? " first=1" : " first=0");
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		*p++ = ' ';
		p = put(p, names[i].name);
		*p++ = '=';
		p = putu(p, __atomic_load_n(&counts[names[i].nr], __ATOMIC_RELAXED));
	}
	p = put(p, " refused_execs=");
	p = putu(p, counts[511]);
	n = sys(NR_READLINKAT, -100, (long)"/proc/self/exe", (long)exe, sizeof exe - 1, 0, 0);
	exe[n > 0 ? n : 0] = 0;
	p = put(p, " exe=");
	p = put(p, exe);
	*p++ = '\n';
	fd = sys(NR_OPENAT, -100, (long)bcfg->report, 02000 | 01 | 0100 | 02000000 /* APPEND|WRONLY|CREAT|CLOEXEC */, 0644, 0, 0);
	if (fd >= 0) {
		sys(NR_WRITE, fd, (long)line, p - line, 0, 0, 0);
		sys(3, fd, 0, 0, 0, 0, 0);
	}
}

static long on_sigprocmask(struct kucontext *uc, long how, const uint64_t *set, uint64_t *old,
                           long size)
{
	uint64_t m = uc->sigmask, want;

	if (size != 8)
		return -22;
	if (set) {
		want = *set;
		if (how == 0)
			m |= want;
		else if (how == 1)
			m &= ~want;
		else if (how == 2)
			m = want;
		else
			return -22;
	}
	if (old)
		*old = uc->sigmask;
	/* what rt_sigreturn restores: the program's wish, SIGSYS left deliverable */
	uc->sigmask = m & ~(SIGSYS_BIT | UNBLOCKABLE);
	return 0;
}

static long on_sigaction(long sig, const struct ksigaction *act, struct ksigaction *old, long size)
{
	struct ksigaction copy;

	if (sig == SIGSYS_) {
		struct ksigaction prev = kept_sigsys;
		if (act)
			kept_sigsys = *act;
		if (old)
			*old = prev;
		return 0;
	}
	if (act) {
		copy = *act;
		copy.mask &= ~SIGSYS_BIT;
		act = &copy;
	}
	return sys(NR_RT_SIGACTION, sig, (long)act, (long)old, size, 0, 0);
}

static long on_exec(long nr, struct kucontext *uc)
{
	const uint64_t *g = uc->gregs;
	int tid = (int)sys(NR_GETTID, 0, 0, 0, 0, 0, 0);
	int fd = rlt_trap_exec_request(hdr->sockname, tid);
	long r;

	if (fd < 0) {
		__atomic_fetch_add(&counts[511], 1, __ATOMIC_RELAXED);
		return -1; /* EPERM: see trap_exec.h */
	}
	/* The handler runs with every signal blocked, and the new image would inherit that: the
	 * program's own mask (never SIGSYS) for the exec. */
	sys(NR_RT_SIGPROCMASK, 2 /* SETMASK */, (long)&uc->sigmask, 0, 8, 0, 0);
	r = sys(nr, (long)g[RDI], (long)g[RSI], (long)g[RDX], (long)g[R10], (long)g[R8], (long)g[R9]);
	rlt_trap_exec_failed(fd, tid, (int)r);
	return r;
}

static void handler(int sig, struct ksiginfo *si, void *ctx)
{
	struct kucontext *uc = ctx;
	uint64_t *g = uc->gregs;
	int nr = si->syscall;
	long r;

	(void)sig;
	if (nr >= 0 && nr < 511)
		__atomic_fetch_add(&counts[nr], 1, __ATOMIC_RELAXED);
	if (bcfg->no_strip && (nr == NR_RT_SIGPROCMASK || nr == NR_RT_SIGACTION))
		nr = -nr; /* the default: made as asked */
	switch (nr) {
	case NR_RT_SIGPROCMASK:
		r = on_sigprocmask(uc, (long)g[RDI], (const uint64_t *)g[RSI], (uint64_t *)g[RDX],
		                   (long)g[R10]);
		break;
	case NR_RT_SIGACTION:
		r = on_sigaction((long)g[RDI], (const struct ksigaction *)g[RSI],
		                 (struct ksigaction *)g[RDX], (long)g[R10]);
		break;
	case NR_EXECVE:
	case NR_EXECVEAT:
		r = on_exec(nr, uc);
		break;
	case NR_EXIT_GROUP:
		report();
		/* fall through */
	default:
		if (nr < 0)
			nr = -nr;
		r = sys(nr, (long)g[RDI], (long)g[RSI], (long)g[RDX], (long)g[R10], (long)g[R8],
		        (long)g[R9]);
	}
	g[RAX] = (uint64_t)r;
}

struct sock_filter {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};
#define STMT(c, k) {(c), 0, 0, (k)}
#define JUMP(c, k, t, f) {(c), (t), (f), (k)}
#define LD 0x20      /* BPF_LD | BPF_W | BPF_ABS */
#define JEQ 0x15     /* BPF_JMP | BPF_JEQ | BPF_K */
#define JGE 0x35     /* BPF_JMP | BPF_JGE | BPF_K */
#define RET 0x06     /* BPF_RET | BPF_K */
#define ALLOW 0x7fff0000u
#define TRAP 0x00030000u

static long install_filter(void)
{
	/* seccomp_data: nr at 0, arch at 4, instruction_pointer at 8 (low word) and 12 (high),
	 * args from 16 */
	static const struct sock_filter f[] = {
		STMT(LD, 4),
		JUMP(JEQ, 0xc000003e, 1, 0), /* AUDIT_ARCH_X86_64 */
		STMT(RET, ALLOW),
		STMT(LD, 12),
		JUMP(JEQ, (uint32_t)(RLT_INJECT_BASE >> 32), 0, 3),
		STMT(LD, 8),
		JUMP(JGE, (uint32_t)RLT_INJECT_SIZE, 1, 0),
		STMT(RET, ALLOW), /* a call from the blob's window */
		STMT(LD, 0),
		JUMP(JEQ, NR_GETPPID, 10, 0),
		JUMP(JEQ, NR_SENDTO, 9, 0),
		JUMP(JEQ, NR_RT_SIGPROCMASK, 8, 0),
		JUMP(JEQ, NR_RT_SIGACTION, 7, 0),
		JUMP(JEQ, NR_EXECVE, 6, 0),
		JUMP(JEQ, NR_EXECVEAT, 5, 0),
		JUMP(JEQ, NR_EXIT_GROUP, 4, 0),
		JUMP(JEQ, NR_WRITE, 1, 0),
		STMT(RET, ALLOW),
		STMT(LD, 16), /* write: the fd, low word */
		JUMP(JGE, 512, 0, 1),
		STMT(RET, TRAP),
		STMT(RET, ALLOW),
	};
	struct {
		unsigned short len;
		const struct sock_filter *filter;
	} prog = {sizeof f / sizeof f[0], f};

	return sys(NR_SECCOMP, 1 /* SET_MODE_FILTER */, 0, (long)&prog, 0, 0, 0);
}

static long fail(const char *msg, long r)
{
	size_t n = slen(msg);
	if (bcfg) {
		if (n >= sizeof bcfg->msg)
			n = sizeof bcfg->msg - 1;
		memcpy(bcfg->msg, msg, n);
		bcfg->msg[n] = 0;
	}
	return r;
}

long rlt_blob_init(struct rlt_inject_hdr *cfg)
{
	struct ksigaction sa = {(void *)handler, 0x04000000 | 0x08000000 | 0x4 /* RESTORER|ONSTACK|SIGINFO */,
	                        (void *)rlt_blob_restorer, ~(SIGSYS_BIT | UNBLOCKABLE)};
	uint64_t sysbit = SIGSYS_BIT;
	long r;

	if (cfg->magic != RLT_INJECT_MAGIC || cfg->opaque_len < sizeof(struct trapblob_cfg))
		return -22;
	hdr = cfg;
	bcfg = (struct trapblob_cfg *)((char *)cfg + cfg->opaque_off);
	r = sys(NR_RT_SIGACTION, SIGSYS_, (long)&sa, 0, 8, 0, 0);
	if (r < 0)
		return fail("rt_sigaction(SIGSYS) failed", r);
	/* an exec made from our handler keeps SIGSYS blocked in the new image */
	sys(NR_RT_SIGPROCMASK, 1 /* UNBLOCK */, (long)&sysbit, 0, 8, 0, 0);
	if (cfg->flags & RLT_INJECT_FIRST) {
		r = install_filter();
		if (r < 0)
			return fail("seccomp(SET_MODE_FILTER) failed", r);
	}
	return 0;
}
