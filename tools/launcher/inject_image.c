/* The injection of one image (issue 21, item 3): the handler's blob put into a program that has
 * no loader.
 *
 * The image is stopped at its exec (the launcher, inject.c, seized it before). We make it do a
 * few system calls of ours (a `syscall; int3` written over its entry point and restored after):
 * it maps the blob's segments at their fixed addresses, a config block and a stack for the
 * blob's init, runs the init (which installs the SIGSYS handler and, in the first image, the
 * filter, and ends with an int3), then we put every register back and detach. The program then
 * starts at its own entry point with its own stack, argv, auxv and /proc/self/exe, and no
 * tracer: a tracer left attached would stop at every trapped call.
 *
 * Errors are values (struct rlt_cli_inject_err); nothing here prints. */
#include "inject_image.h"
#include "inject_proto.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE 4096ULL
#define INIT_STACK (64 * 1024)
/* how long one injected step (a call, the blob's init) may take: a blob whose init hangs turns
 * into an error rather than a hung launcher */
#define STEP_MS 10000

int rlt_cli_inject_seterr(struct rlt_cli_inject_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the blob ---------------------------------------------------------------------------- */

int rlt_cli_inject_parse_blob(const unsigned char *b, size_t len, struct rlt_cli_inject_blob *out,
                              struct rlt_cli_inject_err *err)
{
	const Elf64_Ehdr *eh = (const void *)b;
	const uint64_t wlo = RLT_INJECT_BASE, whi = RLT_INJECT_BASE + RLT_INJECT_SIZE;
	int i, entry_ok = 0;

	memset(out, 0, sizeof *out);
	out->bytes = b;
	if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob is not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob is not an x86-64 ELF");
	if (eh->e_type != ET_EXEC)
		return rlt_cli_inject_seterr(err, -ENOEXEC,
		                             "the handler blob is not ET_EXEC (linked at a fixed address)");
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > len ||
	    (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob's program headers are cut off");
	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		struct rlt_cli_inject_seg *s;

		memcpy(&ph, b + eh->e_phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC)
			return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob is dynamically linked");
		if (ph.p_type == PT_TLS)
			return rlt_cli_inject_seterr(err, -ENOEXEC,
			                             "the handler blob has thread-local data (the program owns %%fs)");
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (out->nseg == RLT_CLI_INJECT_MAX_SEGS)
			return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob has more than %d segments",
			                             RLT_CLI_INJECT_MAX_SEGS);
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > len || len - ph.p_offset < ph.p_filesz)
			return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob's segment %d is cut off", i);
		if (ph.p_vaddr < wlo || ph.p_vaddr >= whi || ph.p_memsz > whi - ph.p_vaddr)
			return rlt_cli_inject_seterr(err, -ENOEXEC,
			                             "the handler blob's segment at 0x%llx is outside its window "
			                             "0x%llx-0x%llx",
			                             (unsigned long long)ph.p_vaddr, (unsigned long long)wlo,
			                             (unsigned long long)whi);
		s = &out->seg[out->nseg];
		if (out->nseg && ph.p_vaddr < s[-1].vaddr + s[-1].memsz)
			return rlt_cli_inject_seterr(err, -ENOEXEC,
			                             "the handler blob's segments overlap or are unsorted");
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->off = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->prot = (ph.p_flags & PF_R ? PROT_READ : 0) | (ph.p_flags & PF_W ? PROT_WRITE : 0) |
		          (ph.p_flags & PF_X ? PROT_EXEC : 0);
		if ((ph.p_flags & PF_X) && eh->e_entry >= ph.p_vaddr &&
		    eh->e_entry < ph.p_vaddr + ph.p_memsz)
			entry_ok = 1;
		out->nseg++;
	}
	if (!out->nseg)
		return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob has nothing to load");
	if (!entry_ok)
		return rlt_cli_inject_seterr(err, -ENOEXEC, "the handler blob's entry 0x%llx is not in its code",
		                             (unsigned long long)eh->e_entry);
	out->entry = eh->e_entry;
	out->lo = out->seg[0].vaddr & ~(PAGE - 1);
	out->hi = (out->seg[out->nseg - 1].vaddr + out->seg[out->nseg - 1].memsz + PAGE - 1) &
	          ~(PAGE - 1);
	return 0;
}

int rlt_cli_inject_check_blob(const unsigned char *blob, size_t len, struct rlt_cli_inject_err *err)
{
	struct rlt_cli_inject_blob b;

	return rlt_cli_inject_parse_blob(blob, len, &b, err);
}

/* ---- one image --------------------------------------------------------------------------- */

/* What one injection holds while it runs. */
struct img {
	pid_t pid;
	struct user_regs_struct saved;  /* the program's registers at its entry point */
	struct user_fpregs_struct fp;   /* and its FPU state: the blob's init may touch it */
	uint64_t code;                  /* the entry point: where `syscall; int3` is written */
	long orig_word;                 /* the 8 bytes that were there */
	int pending_sig;                /* a signal for the program that came meanwhile */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* waitpid for pid until deadline (ms): -ETIMEDOUT then. SIGCHLD is blocked while the launcher
 * runs (rlt_cli_inject_run), and a tracee's stop sends one: we sleep in sigtimedwait for it,
 * 50 ms at most, since one may have been taken by an earlier wait. */
static int wait_until(pid_t pid, int *st, long long deadline)
{
	sigset_t chld;
	pid_t r;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		long long left;
		r = waitpid(pid, st, WNOHANG | __WALL);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct timespec ts = {0, (left < 50 ? left : 50) * 1000000L};
		sigtimedwait(&chld, NULL, &ts);
	}
}

/* Continues the image until its next int3 (SIGTRAP), setting aside the signals for the
 * program that come first (delivered at the detach). */
static int run_to_trap(struct img *im, struct rlt_cli_inject_err *err, const char *what)
{
	long long deadline = now_ms() + STEP_MS;
	int st, i, rc;

	if (ptrace(PTRACE_CONT, im->pid, 0, 0) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot continue the command (%s): %s", what,
		                             strerror(errno));
	for (i = 0; i < RLT_CLI_INJECT_MAX_STOPS; i++) {
		if ((rc = wait_until(im->pid, &st, deadline)) == -ETIMEDOUT)
			return rlt_cli_inject_seterr(err, rc, "the command did not come back within %d s (%s)",
			                             STEP_MS / 1000, what);
		if (rc != 0)
			return rlt_cli_inject_seterr(err, rc, "cannot wait for the command (%s): %s", what,
			                             strerror(-rc));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return rlt_cli_inject_seterr(err, -ESRCH, "the command ended while the handler was put in (%s)",
			                             what);
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0)
			return 0;
		if ((st >> 16) == 0) {
			int sig = WSTOPSIG(st);
			if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
			    sig == SIGSYS) {
				struct user_regs_struct rg;
				ptrace(PTRACE_GETREGS, im->pid, 0, &rg);
				return rlt_cli_inject_seterr(err, -EFAULT, "the handler's code faulted (%s): %s at 0x%llx",
				                             what, strsignal(sig), (unsigned long long)rg.rip);
			}
			im->pending_sig = sig;
		}
		if (ptrace(PTRACE_CONT, im->pid, 0, 0) != 0)
			return rlt_cli_inject_seterr(err, -errno, "cannot continue the command (%s): %s", what,
			                             strerror(errno));
	}
	return rlt_cli_inject_seterr(err, -EAGAIN, "too many signals while the handler was put in (%s)",
	                             what);
}

/* One system call made by the image, from its entry point; the result (-errno on failure). */
static int remote_call(struct img *im, long *ret, long nr, long a, long b, long c, long d,
                       long e, long f, struct rlt_cli_inject_err *err)
{
	struct user_regs_struct rg = im->saved;
	char what[32];

	rg.rip = im->code;
	rg.rax = (unsigned long long)nr;
	rg.orig_rax = (unsigned long long)-1;
	rg.rdi = (unsigned long long)a;
	rg.rsi = (unsigned long long)b;
	rg.rdx = (unsigned long long)c;
	rg.r10 = (unsigned long long)d;
	rg.r8 = (unsigned long long)e;
	rg.r9 = (unsigned long long)f;
	if (ptrace(PTRACE_SETREGS, im->pid, 0, &rg) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot set the command's registers: %s",
		                             strerror(errno));
	snprintf(what, sizeof what, "system call %ld", nr);
	if (run_to_trap(im, err, what) != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, im->pid, 0, &rg) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot read the command's registers: %s",
		                             strerror(errno));
	*ret = (long)rg.rax;
	return 0;
}

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = {(void *)buf, len}, r = {(void *)(uintptr_t)addr, len};
	char path[40];
	ssize_t n;
	int fd;

	if (len == 0)
		return 0;
	n = process_vm_writev(pid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	/* a kernel without process_vm_writev, or a partial write: /proc/PID/mem */
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pwrite(fd, buf, len, (off_t)addr);
	close(fd);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EIO;
}

/* mmap in the image: the address, or -1 with *err set. */
static int remote_mmap(struct img *im, uint64_t addr, uint64_t len, int prot, int flags,
                       uint64_t *out, const char *what, struct rlt_cli_inject_err *err)
{
	long r = 0;

	if (remote_call(im, &r, SYS_mmap, (long)addr, (long)len, prot, flags, -1, 0, err) != 0)
		return -1;
	if (r == -EEXIST)
		return rlt_cli_inject_seterr(err, -EEXIST,
		                             "the handler's address 0x%llx-0x%llx is taken in the command "
		                             "(it maps something there)",
		                             (unsigned long long)addr, (unsigned long long)(addr + len));
	if (r < 0 && r > -4096)
		return rlt_cli_inject_seterr(err, (int)r, "cannot map %s in the command: %s", what,
		                             strerror((int)-r));
	if ((flags & MAP_FIXED_NOREPLACE) && (uint64_t)r != addr) {
		/* a kernel older than 4.17 takes the flag as a hint */
		remote_call(im, &r, SYS_munmap, r, (long)len, 0, 0, 0, 0, err);
		return rlt_cli_inject_seterr(err, -EEXIST, "the handler's address 0x%llx is taken in the command",
		                             (unsigned long long)addr);
	}
	*out = (uint64_t)r;
	return 0;
}

static int remote_mprotect(struct img *im, uint64_t a, uint64_t b, int prot,
                           struct rlt_cli_inject_err *err)
{
	long r = 0;

	if (b <= a)
		return 0;
	if (remote_call(im, &r, SYS_mprotect, (long)a, (long)(b - a), prot, 0, 0, 0, err) != 0)
		return -1;
	if (r < 0)
		return rlt_cli_inject_seterr(err, (int)r, "cannot protect the handler's pages: %s",
		                             strerror((int)-r));
	return 0;
}

/* Maps the blob's segments, with their contents, zeroed bss and their own protections. */
static int map_blob(struct img *im, const struct rlt_cli_inject_blob *b,
                    struct rlt_cli_inject_err *err)
{
	uint64_t got, prev_end = b->lo;
	int i, rc, prev_prot = PROT_NONE;

	if (remote_mmap(im, b->lo, b->hi - b->lo, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, &got, "the handler",
	                err) != 0)
		return -1;
	for (i = 0; i < b->nseg; i++) {
		const struct rlt_cli_inject_seg *s = &b->seg[i];
		if ((rc = write_mem(im->pid, s->vaddr, b->bytes + s->off, s->filesz)) != 0)
			return rlt_cli_inject_seterr(err, rc, "cannot write the handler into the command: %s",
			                             strerror(-rc));
	}
	for (i = 0; i < b->nseg; i++) {
		const struct rlt_cli_inject_seg *s = &b->seg[i];
		uint64_t a = s->vaddr & ~(PAGE - 1), e = (s->vaddr + s->memsz + PAGE - 1) & ~(PAGE - 1);
		/* a page two segments share gets both their rights; a gap between them none */
		if (remote_mprotect(im, prev_end, a, PROT_NONE, err) != 0 ||
		    remote_mprotect(im, a, e, s->prot, err) != 0 ||
		    (a < prev_end && remote_mprotect(im, a, prev_end < e ? prev_end : e,
		                                     s->prot | prev_prot, err) != 0))
			return -1;
		if (e > prev_end)
			prev_end = e;
		prev_prot = s->prot;
	}
	return 0;
}

/* Leaves the execve the image is stopped in (its return would overwrite rax), saves the
 * program's registers at its entry point and writes `syscall; int3` there. */
static int enter(struct img *im, struct rlt_cli_inject_err *err)
{
	struct user_regs_struct rg;
	long word;

	errno = 0;
	if (ptrace(PTRACE_GETREGS, im->pid, 0, &rg) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot read the command's registers: %s",
		                             strerror(errno));
	im->code = rg.rip;
	im->orig_word = ptrace(PTRACE_PEEKTEXT, im->pid, (void *)(uintptr_t)im->code, 0);
	if (errno)
		return rlt_cli_inject_seterr(err, -errno,
		                             "cannot read the command's entry point: %s",
		                             strerror(errno));
	/* An int3 at the entry point stops the image before its first instruction, out of any
	 * system call. */
	word = (im->orig_word & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, im->pid, (void *)(uintptr_t)im->code, (void *)word) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot write into the command: %s",
		                             strerror(errno));
	if (run_to_trap(im, err, "leaving execve") != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, im->pid, 0, &im->saved) != 0 ||
	    ptrace(PTRACE_GETFPREGS, im->pid, 0, &im->fp) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot read the command's registers: %s",
		                             strerror(errno));
	im->saved.rip = im->code;
	/* syscall (0f 05); int3 (cc) */
	word = (im->orig_word & ~0xffffffL) | 0xcc050fL;
	if (ptrace(PTRACE_POKETEXT, im->pid, (void *)(uintptr_t)im->code, (void *)word) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot write into the command: %s",
		                             strerror(errno));
	return 0;
}

/* Maps the config block (its header, then p's opaque bytes) and the init's stack into the
 * image and fills them: their addresses in *cfg and *stack. */
static int place_config(struct img *im, const struct rlt_cli_inject_payload *p, uint32_t flags,
                        uint64_t *cfg, uint64_t *stack, struct rlt_cli_inject_err *err)
{
	struct rlt_inject_hdr hdr;
	size_t cfg_len = sizeof hdr + p->config_len;
	uint64_t ret_addr;

	memset(&hdr, 0, sizeof hdr);
	hdr.magic = RLT_INJECT_MAGIC;
	hdr.size = (uint32_t)cfg_len;
	hdr.opaque_off = sizeof hdr;
	hdr.opaque_len = (uint32_t)p->config_len;
	hdr.flags = flags;
	hdr.launcher_pid = (int32_t)getpid();
	memcpy(hdr.sockname, p->sockname, sizeof hdr.sockname);
	if (remote_mmap(im, 0, (cfg_len + PAGE - 1) & ~(PAGE - 1), PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, cfg, "the config block", err) != 0 ||
	    remote_mmap(im, 0, INIT_STACK, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, stack, "the init stack", err) != 0)
		return -1;
	/* the return address of the init, in case it returns rather than ending with its own
	 * int3: the int3 after our syscall instruction */
	ret_addr = im->code + 2;
	if (write_mem(im->pid, *cfg, &hdr, sizeof hdr) != 0 ||
	    write_mem(im->pid, *cfg + sizeof hdr, p->config, p->config_len) != 0 ||
	    write_mem(im->pid, *stack + INIT_STACK - 8, &ret_addr, sizeof ret_addr) != 0)
		return rlt_cli_inject_seterr(err, -EIO,
		                             "cannot write the config block into the command");
	return 0;
}

/* Runs the blob's init on its stack, with the config block; its result (0 or -errno) in *res. */
static int run_init(struct img *im, uint64_t entry, uint64_t cfg, uint64_t stack, long *res,
                    struct rlt_cli_inject_err *err)
{
	struct user_regs_struct rg = im->saved;

	rg.rip = entry;
	rg.rsp = stack + INIT_STACK - 8; /* 16-byte aligned before the call pushed its address */
	rg.rdi = cfg;
	rg.rsi = im->saved.rsp; /* the image's first stack: argc, argv, envp, auxv */
	rg.rax = 0;
	rg.orig_rax = (unsigned long long)-1;
	rg.eflags &= ~0x400ULL; /* the ABI's clear direction flag */
	if (ptrace(PTRACE_SETREGS, im->pid, 0, &rg) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot set the command's registers: %s",
		                             strerror(errno));
	if (run_to_trap(im, err, "the handler's init") != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, im->pid, 0, &rg) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot read the command's registers: %s",
		                             strerror(errno));
	*res = (long)(int)rg.rax;
	return 0;
}

/* Unmaps the init's stack, puts back the entry point's bytes, every register and the FPU
 * state, and detaches (delivering a signal that came meanwhile). */
static int leave(struct img *im, uint64_t stack, struct rlt_cli_inject_err *err)
{
	long res;

	if (remote_call(im, &res, SYS_munmap, (long)stack, INIT_STACK, 0, 0, 0, 0, err) != 0)
		return -1;
	if (ptrace(PTRACE_POKETEXT, im->pid, (void *)(uintptr_t)im->code, (void *)im->orig_word) != 0 ||
	    ptrace(PTRACE_SETREGS, im->pid, 0, &im->saved) != 0 ||
	    ptrace(PTRACE_SETFPREGS, im->pid, 0, &im->fp) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot restore the command: %s",
		                             strerror(errno));
	if (ptrace(PTRACE_DETACH, im->pid, 0, (void *)(long)im->pending_sig) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot detach from the command: %s",
		                             strerror(errno));
	return 0;
}

int rlt_cli_inject_image(const struct rlt_cli_inject_payload *p, pid_t pid, uint32_t flags,
                         void *readback, size_t readback_len, struct rlt_cli_inject_err *err)
{
	struct img im = {.pid = pid};
	size_t cfg_len = sizeof(struct rlt_inject_hdr) + p->config_len;
	uint64_t cfg = 0, stack = 0;
	long res = 0;

	if (enter(&im, err) != 0 || map_blob(&im, &p->blob, err) != 0 ||
	    place_config(&im, p, flags, &cfg, &stack, err) != 0 ||
	    run_init(&im, p->blob.entry, cfg, stack, &res, err) != 0)
		return -1;
	if (readback && readback_len)
		read_mem(pid, cfg, readback, readback_len < cfg_len ? readback_len : cfg_len);
	if (res < 0)
		return rlt_cli_inject_seterr(err, (int)res, "the handler's init failed: %s",
		                             strerror((int)-res));
	return leave(&im, stack, err);
}
