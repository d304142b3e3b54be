/* bench_trap (issue 21, "start by measuring"): the cost of a system call trapped by a seccomp
 * filter (SECCOMP_RET_TRAP) and made by a SIGSYS handler from code at the blob's fixed address,
 * which the filter allows by an instruction-pointer test. Prints ns per call, best of 5 runs:
 *   direct            raw getppid, no filter
 *   filtered, other   raw getpid with the filter installed (a call it lets through)
 *   filtered, by ip   raw getppid made from the window (allowed by the ip test)
 *   trapped           raw getppid from the program's text: SIGSYS, the handler makes it
 *   let through, by filter shape: getpid in a child under (1) a filter that allows all, (2) the
 *                     ip test first (as above), (3) the number first and the ip test only
 *                     for the trapped numbers: the kernel's per-number cache (5.11+) then
 *                     passes getpid without running the program
 *   signal            for scale: a raw tgkill of SIGUSR2 to itself, delivered to an empty
 *                     handler (the signal's own round trip, without seccomp) */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#define BASE 0x5a5a00000000ULL
#define WINDOW (64ULL << 20)
#define CALLS 200000

typedef long (*stub_t)(long nr);
static stub_t stub; /* mov %rdi,%rax; syscall; ret -- at BASE */
static volatile long trapped;

static long raw0(long nr)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
	return ret;
}

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	(void)sig;
	trapped++;
	uc->uc_mcontext.gregs[REG_RAX] = stub(si->si_syscall);
}

static void on_usr2(int sig)
{
	(void)sig;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* best of 5 runs of CALLS raw tgkill(self, SIGUSR2), ns per call */
static double measure_signal(void)
{
	long pid = raw0(SYS_getpid), tid = raw0(SYS_gettid), ret;
	double best = 1e18;
	int r, i;

	for (r = 0; r < 5; r++) {
		double t0 = now_ns();
		for (i = 0; i < CALLS; i++) {
			register long a3 __asm__("rdx") = SIGUSR2;
			__asm__ volatile("syscall"
			                 : "=a"(ret)
			                 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "r"(a3)
			                 : "rcx", "r11", "memory");
		}
		double ns = (now_ns() - t0) / CALLS;
		if (ns < best)
			best = ns;
	}
	return best;
}

/* best of 5 runs of CALLS calls, ns per call */
static double measure(long nr, int via_stub)
{
	double best = 1e18;
	int r, i;

	for (r = 0; r < 5; r++) {
		double t0 = now_ns();
		for (i = 0; i < CALLS; i++)
			if (via_stub)
				stub(nr);
			else
				raw0(nr);
		double ns = (now_ns() - t0) / CALLS;
		if (ns < best)
			best = ns;
	}
	return best;
}

#include <sys/wait.h>

/* getpid ns per call in a child under filter prog (a forked child: filters stack) */
static double in_child(struct sock_fprog *prog)
{
	int pfd[2], st;
	double ns = -1;
	pid_t pid;

	if (pipe(pfd) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		ns = -1;
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) == 0)
			ns = measure(SYS_getpid, 0);
		if (write(pfd[1], &ns, sizeof ns) < 0)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &ns, sizeof ns) != sizeof ns)
		ns = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return ns;
}

int main(void)
{
	struct sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_filter nr_first[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(BASE >> 32), 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)WINDOW, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog p_all = {1, allow_all};
	struct sock_fprog p_nr = {sizeof nr_first / sizeof nr_first[0], nr_first};
	double c_all, c_ip, c_nr;
	static const unsigned char code[] = {0x48, 0x89, 0xf8, 0x0f, 0x05, 0xc3};
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(BASE >> 32), 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)WINDOW, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	struct sigaction sa;
	double direct, dpid, other, byip, trap, sig;
	void *p;

	p = mmap((void *)BASE, 4096, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)BASE) {
		perror("bench_trap: mmap at the window");
		return 1;
	}
	memcpy(p, code, sizeof code);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	stub = (stub_t)p;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) != 0)
		return 1;

	signal(SIGUSR2, on_usr2);
	sig = measure_signal();
	direct = measure(SYS_getppid, 0);
	dpid = measure(SYS_getpid, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("bench_trap: PR_SET_NO_NEW_PRIVS");
		return 1;
	}
	c_ip = in_child(&prog);
	c_all = in_child(&p_all);
	c_nr = in_child(&p_nr);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		perror("bench_trap: seccomp");
		return 1;
	}
	other = measure(SYS_getpid, 0);
	byip = measure(SYS_getppid, 1);
	trapped = 0;
	trap = measure(SYS_getppid, 0);
	if (trapped != 5L * CALLS || raw0(SYS_getppid) != getppid()) {
		fprintf(stderr, "bench_trap: %ld calls trapped, expected %ld\n", trapped, 5L * CALLS);
		return 1;
	}
	printf("bench_trap: ns per call, best of 5 x %d calls\n", CALLS);
	printf("  %-44s %8.0f ns\n", "getppid, direct (no filter)", direct);
	printf("  %-44s %8.0f ns\n", "getpid, direct (no filter)", dpid);
	printf("  %-44s %8.0f ns  (%.2fx direct getpid)\n", "getpid, filter installed, let through",
	       other, other / dpid);
	printf("  %-44s %8.0f ns  (%.2fx direct)\n", "getppid from the window, allowed by ip", byip,
	       byip / direct);
	printf("  %-44s %8.0f ns  (%.1fx direct)\n", "getppid trapped, made by the SIGSYS handler",
	       trap, trap / direct);
	printf("  %-44s %8.0f ns\n", "for scale: tgkill + empty handler, no filter", sig);
	printf("  getpid let through, by the filter's shape (each alone, in a child):\n");
	printf("  %-44s %8.0f ns\n", "  + allow-all", c_all);
	printf("  %-44s %8.0f ns\n", "  + ip test first", c_ip);
	printf("  %-44s %8.0f ns\n", "  + number first, ip test on trapped numbers", c_nr);
	return 0;
}
