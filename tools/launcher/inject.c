/* The injector (issue 21, item 3): puts the handler's blob into a program that has no loader.
 *
 * The launcher forks the command, seizes it with ptrace before its exec, and at the exec stop
 * makes the new image do a few system calls of ours (a `syscall; int3` written over its entry
 * point and restored after): it maps the blob's segments at their fixed addresses, a config
 * block and a stack for the blob's init, runs the init (which installs the SIGSYS handler and,
 * in the first image, the filter, and ends with an int3), then puts every register back and
 * detaches. The program then starts at its own entry point with its own stack, argv, auxv and
 * /proc/self/exe, and no tracer: a tracer left attached would stop at every trapped call.
 *
 * The filter outlives an exec and the handler does not, so the launcher stays: it waits for the
 * command and serves a unix socket on which a thread about to exec asks to be seized
 * (src/inject_proto.h); its new image is injected the same way.
 *
 * Errors are values (struct rlt_cli_inject_err); nothing here prints. */
#include "inject.h"
#include "inject_proto.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE 4096ULL
#define MAX_SEGS 8
#define MAX_CONNS 64
#define INIT_STACK (64 * 1024)
/* how many unrelated stops (signals for the program) one injected step may meet */
#define MAX_OTHER_STOPS 64
/* how long one injected step (a call, the blob's init) may take: a blob whose init hangs turns
 * into an error rather than a hung launcher */
#define STEP_MS 10000

struct seg {
	uint64_t vaddr, memsz, off, filesz;
	int prot;
};

struct blob {
	const unsigned char *bytes;
	struct seg seg[MAX_SEGS];
	int nseg;
	uint64_t entry;
	uint64_t lo, hi; /* the pages the segments span */
};

/* A thread seized at its own request, until its exec stop (or its failed exec). */
struct tracee {
	pid_t tid; /* 0: a free slot */
	int fd;    /* its requester's connection, -1 once closed */
};

struct run {
	const struct rlt_cli_inject_opts *o;
	struct blob blob;
	char sockname[64];
	pid_t child;
	int child_done, child_status;
	int none_left; /* no process of the command is left (waitpid: ECHILD) */
	struct tracee t[MAX_CONNS];
	int conn[MAX_CONNS]; /* accepted connections, -1: free */
};

static int seterr(struct rlt_cli_inject_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int seterr(struct rlt_cli_inject_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

static void logf_(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct run *r, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (!r->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	r->o->log(r->o->log_ctx, line);
}

/* ---- the blob ---------------------------------------------------------------------------- */

static int parse_blob(const unsigned char *b, size_t len, struct blob *out,
                      struct rlt_cli_inject_err *err)
{
	const Elf64_Ehdr *eh = (const void *)b;
	const uint64_t wlo = RLT_INJECT_BASE, whi = RLT_INJECT_BASE + RLT_INJECT_SIZE;
	int i, entry_ok = 0;

	memset(out, 0, sizeof *out);
	out->bytes = b;
	if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return seterr(err, -ENOEXEC, "the handler blob is not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64)
		return seterr(err, -ENOEXEC, "the handler blob is not an x86-64 ELF");
	if (eh->e_type != ET_EXEC)
		return seterr(err, -ENOEXEC, "the handler blob is not ET_EXEC (linked at a fixed address)");
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > len ||
	    (len - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return seterr(err, -ENOEXEC, "the handler blob's program headers are cut off");
	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		struct seg *s;

		memcpy(&ph, b + eh->e_phoff + (size_t)i * sizeof ph, sizeof ph);
		if (ph.p_type == PT_INTERP || ph.p_type == PT_DYNAMIC)
			return seterr(err, -ENOEXEC, "the handler blob is dynamically linked");
		if (ph.p_type == PT_TLS)
			return seterr(err, -ENOEXEC,
			              "the handler blob has thread-local data (the program owns %%fs)");
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (out->nseg == MAX_SEGS)
			return seterr(err, -ENOEXEC, "the handler blob has more than %d segments", MAX_SEGS);
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > len || len - ph.p_offset < ph.p_filesz)
			return seterr(err, -ENOEXEC, "the handler blob's segment %d is cut off", i);
		if (ph.p_vaddr < wlo || ph.p_vaddr >= whi || ph.p_memsz > whi - ph.p_vaddr)
			return seterr(err, -ENOEXEC,
			              "the handler blob's segment at 0x%llx is outside its window "
			              "0x%llx-0x%llx",
			              (unsigned long long)ph.p_vaddr, (unsigned long long)wlo,
			              (unsigned long long)whi);
		s = &out->seg[out->nseg];
		if (out->nseg && ph.p_vaddr < s[-1].vaddr + s[-1].memsz)
			return seterr(err, -ENOEXEC, "the handler blob's segments overlap or are unsorted");
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
		return seterr(err, -ENOEXEC, "the handler blob has nothing to load");
	if (!entry_ok)
		return seterr(err, -ENOEXEC, "the handler blob's entry 0x%llx is not in its code",
		              (unsigned long long)eh->e_entry);
	out->entry = eh->e_entry;
	out->lo = out->seg[0].vaddr & ~(PAGE - 1);
	out->hi = (out->seg[out->nseg - 1].vaddr + out->seg[out->nseg - 1].memsz + PAGE - 1) &
	          ~(PAGE - 1);
	return 0;
}

int rlt_cli_inject_check_blob(const unsigned char *blob, size_t len, struct rlt_cli_inject_err *err)
{
	struct blob b;

	return parse_blob(blob, len, &b, err);
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

static int wait_for(pid_t pid, int *st)
{
	while (waitpid(pid, st, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

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
		return seterr(err, -errno, "cannot continue the command (%s): %s", what, strerror(errno));
	for (i = 0; i < MAX_OTHER_STOPS; i++) {
		if ((rc = wait_until(im->pid, &st, deadline)) == -ETIMEDOUT)
			return seterr(err, rc, "the command did not come back within %d s (%s)",
			              STEP_MS / 1000, what);
		if (rc != 0)
			return seterr(err, rc, "cannot wait for the command (%s): %s", what, strerror(-rc));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return seterr(err, -ESRCH, "the command ended while the handler was put in (%s)",
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
				return seterr(err, -EFAULT, "the handler's code faulted (%s): %s at 0x%llx",
				              what, strsignal(sig), (unsigned long long)rg.rip);
			}
			im->pending_sig = sig;
		}
		if (ptrace(PTRACE_CONT, im->pid, 0, 0) != 0)
			return seterr(err, -errno, "cannot continue the command (%s): %s", what,
			              strerror(errno));
	}
	return seterr(err, -EAGAIN, "too many signals while the handler was put in (%s)", what);
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
		return seterr(err, -errno, "cannot set the command's registers: %s", strerror(errno));
	snprintf(what, sizeof what, "system call %ld", nr);
	if (run_to_trap(im, err, what) != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, im->pid, 0, &rg) != 0)
		return seterr(err, -errno, "cannot read the command's registers: %s", strerror(errno));
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
	long r;

	if (remote_call(im, &r, SYS_mmap, (long)addr, (long)len, prot, flags, -1, 0, err) != 0)
		return -1;
	if (r == -EEXIST)
		return seterr(err, -EEXIST,
		              "the handler's address 0x%llx-0x%llx is taken in the command (it maps "
		              "something there)",
		              (unsigned long long)addr, (unsigned long long)(addr + len));
	if (r < 0 && r > -4096)
		return seterr(err, (int)r, "cannot map %s in the command: %s", what, strerror((int)-r));
	if ((flags & MAP_FIXED_NOREPLACE) && (uint64_t)r != addr) {
		/* a kernel older than 4.17 takes the flag as a hint */
		remote_call(im, &r, SYS_munmap, r, (long)len, 0, 0, 0, 0, err);
		return seterr(err, -EEXIST, "the handler's address 0x%llx is taken in the command",
		              (unsigned long long)addr);
	}
	*out = (uint64_t)r;
	return 0;
}

static int remote_mprotect(struct img *im, uint64_t a, uint64_t b, int prot,
                           struct rlt_cli_inject_err *err)
{
	long r;

	if (b <= a)
		return 0;
	if (remote_call(im, &r, SYS_mprotect, (long)a, (long)(b - a), prot, 0, 0, 0, err) != 0)
		return -1;
	if (r < 0)
		return seterr(err, (int)r, "cannot protect the handler's pages: %s", strerror((int)-r));
	return 0;
}

/* Maps the blob's segments, with their contents, zeroed bss and their own protections. */
static int map_blob(struct img *im, const struct blob *b, struct rlt_cli_inject_err *err)
{
	uint64_t got, prev_end = b->lo;
	int i, rc, prev_prot = PROT_NONE;

	if (remote_mmap(im, b->lo, b->hi - b->lo, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, &got, "the handler",
	                err) != 0)
		return -1;
	for (i = 0; i < b->nseg; i++) {
		const struct seg *s = &b->seg[i];
		if ((rc = write_mem(im->pid, s->vaddr, b->bytes + s->off, s->filesz)) != 0)
			return seterr(err, rc, "cannot write the handler into the command: %s",
			              strerror(-rc));
	}
	for (i = 0; i < b->nseg; i++) {
		const struct seg *s = &b->seg[i];
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

/* Injects the blob into the image stopped at its exec (PTRACE_EVENT_EXEC) and detaches.
 * flags go into the config block; readback, if not NULL, gets its first bytes after init. On
 * failure the image is left stopped and attached (the caller kills it). */
static int inject_image(struct run *r, pid_t pid, uint32_t flags, void *readback,
                        size_t readback_len, struct rlt_cli_inject_err *err)
{
	const struct rlt_cli_inject_opts *o = r->o;
	struct img im = {.pid = pid};
	struct rlt_inject_hdr hdr;
	struct user_regs_struct rg;
	uint64_t cfg, stack, ret_addr;
	size_t cfg_len = sizeof hdr + o->config_len;
	long word, res;

	errno = 0;
	if (ptrace(PTRACE_GETREGS, pid, 0, &rg) != 0)
		return seterr(err, -errno, "cannot read the command's registers: %s", strerror(errno));
	im.code = rg.rip;
	im.orig_word = ptrace(PTRACE_PEEKTEXT, pid, (void *)(uintptr_t)im.code, 0);
	if (errno)
		return seterr(err, -errno, "cannot read the command's entry point: %s", strerror(errno));
	/* First leave the execve: its return would overwrite rax. An int3 at the entry point
	 * stops the image before its first instruction, out of any system call. */
	word = (im.orig_word & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)im.code, (void *)word) != 0)
		return seterr(err, -errno, "cannot write into the command: %s", strerror(errno));
	if (run_to_trap(&im, err, "leaving execve") != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, pid, 0, &im.saved) != 0 ||
	    ptrace(PTRACE_GETFPREGS, pid, 0, &im.fp) != 0)
		return seterr(err, -errno, "cannot read the command's registers: %s", strerror(errno));
	im.saved.rip = im.code;
	/* syscall (0f 05); int3 (cc) */
	word = (im.orig_word & ~0xffffffL) | 0xcc050fL;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)im.code, (void *)word) != 0)
		return seterr(err, -errno, "cannot write into the command: %s", strerror(errno));

	if (map_blob(&im, &r->blob, err) != 0)
		return -1;
	memset(&hdr, 0, sizeof hdr);
	hdr.magic = RLT_INJECT_MAGIC;
	hdr.size = (uint32_t)cfg_len;
	hdr.opaque_off = sizeof hdr;
	hdr.opaque_len = (uint32_t)o->config_len;
	hdr.flags = flags;
	hdr.launcher_pid = (int32_t)getpid();
	memcpy(hdr.sockname, r->sockname, sizeof hdr.sockname);
	if (remote_mmap(&im, 0, (cfg_len + PAGE - 1) & ~(PAGE - 1), PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, &cfg, "the config block", err) != 0 ||
	    remote_mmap(&im, 0, INIT_STACK, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, &stack, "the init stack", err) != 0)
		return -1;
	/* the return address of the init, in case it returns rather than ending with its own
	 * int3: the int3 after our syscall instruction */
	ret_addr = im.code + 2;
	if (write_mem(pid, cfg, &hdr, sizeof hdr) != 0 ||
	    write_mem(pid, cfg + sizeof hdr, o->config, o->config_len) != 0 ||
	    write_mem(pid, stack + INIT_STACK - 8, &ret_addr, sizeof ret_addr) != 0)
		return seterr(err, -EIO, "cannot write the config block into the command");

	rg = im.saved;
	rg.rip = r->blob.entry;
	rg.rsp = stack + INIT_STACK - 8; /* 16-byte aligned before the call pushed its address */
	rg.rdi = cfg;
	rg.rsi = im.saved.rsp; /* the image's first stack: argc, argv, envp, auxv */
	rg.rax = 0;
	rg.orig_rax = (unsigned long long)-1;
	rg.eflags &= ~0x400ULL; /* the ABI's clear direction flag */
	if (ptrace(PTRACE_SETREGS, pid, 0, &rg) != 0)
		return seterr(err, -errno, "cannot set the command's registers: %s", strerror(errno));
	if (run_to_trap(&im, err, "the handler's init") != 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, pid, 0, &rg) != 0)
		return seterr(err, -errno, "cannot read the command's registers: %s", strerror(errno));
	res = (long)(int)rg.rax;
	if (readback && readback_len)
		read_mem(pid, cfg, readback, readback_len < cfg_len ? readback_len : cfg_len);
	if (res < 0)
		return seterr(err, (int)res, "the handler's init failed: %s", strerror((int)-res));

	if (remote_call(&im, &res, SYS_munmap, (long)stack, INIT_STACK, 0, 0, 0, 0, err) != 0)
		return -1;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)(uintptr_t)im.code, (void *)im.orig_word) != 0 ||
	    ptrace(PTRACE_SETREGS, pid, 0, &im.saved) != 0 ||
	    ptrace(PTRACE_SETFPREGS, pid, 0, &im.fp) != 0)
		return seterr(err, -errno, "cannot restore the command: %s", strerror(errno));
	if (ptrace(PTRACE_DETACH, pid, 0, (void *)(long)im.pending_sig) != 0)
		return seterr(err, -errno, "cannot detach from the command: %s", strerror(errno));
	return 0;
}

/* ---- the launcher's loop ----------------------------------------------------------------- */

static int make_socket(struct run *r, struct rlt_cli_inject_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	unsigned long long nonce = 0;
	size_t n;
	int fd;

	if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
		nonce = (unsigned long long)time(NULL) * 2654435761ULL ^ (unsigned long long)getpid();
	snprintf(r->sockname, sizeof r->sockname, "%s%d-%016llx", RLT_INJECT_SOCK_PREFIX,
	         (int)getpid(), nonce);
	n = strlen(r->sockname);
	memcpy(sa.sun_path + 1, r->sockname, n);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un,
	                                                                   sun_path) + 1 + n)) != 0 ||
	    listen(fd, 16) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return seterr(err, -e, "cannot make the exec socket: %s", strerror(e));
	}
	return fd;
}

static struct tracee *find_tracee(struct run *r, pid_t tid)
{
	int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (r->t[i].tid == tid && tid)
			return &r->t[i];
	return NULL;
}

static void reply(int fd, int32_t tid, int32_t status)
{
	struct rlt_inject_msg m = {RLT_INJECT_MAGIC, RLT_INJECT_REPLY, tid, status};

	if (fd >= 0)
		send(fd, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The thread group of tid, from /proc; 0 if it is gone. */
static pid_t tgid_of(pid_t tid)
{
	char path[48], line[128];
	pid_t tg = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tg) == 1)
			break;
	fclose(f);
	return tg;
}

static void on_attach(struct run *r, int fd, const struct rlt_inject_msg *m)
{
	struct ucred cr;
	socklen_t cl = sizeof cr;
	int i;

	/* only a thread of the process that asks, of our own user */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != getuid() ||
	    m->tid <= 0 || tgid_of(m->tid) != cr.pid) {
		reply(fd, m->tid, -EPERM);
		return;
	}
	for (i = 0; i < MAX_CONNS && r->t[i].tid; i++)
		;
	if (i == MAX_CONNS || find_tracee(r, m->tid)) {
		reply(fd, m->tid, -EBUSY);
		return;
	}
	if (ptrace(PTRACE_SEIZE, m->tid, 0, (void *)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) != 0) {
		int e = errno;
		logf_(r, "cannot attach to %d before its exec: %s", (int)m->tid, strerror(e));
		reply(fd, m->tid, -e);
		return;
	}
	r->t[i].tid = m->tid;
	r->t[i].fd = fd;
	reply(fd, m->tid, 0);
}

/* The exec of t failed: stop it, detach, say so. */
static void on_exec_failed(struct tracee *t)
{
	int st, i, sig = 0;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0) {
		for (i = 0; i < MAX_OTHER_STOPS; i++) {
			if (wait_for(t->tid, &st) != 0 || !WIFSTOPPED(st))
				break;
			if ((st >> 16) == PTRACE_EVENT_STOP)
				break;
			if ((st >> 16) == 0) {
				sig = WSTOPSIG(st);
				break; /* detach delivers it */
			}
			ptrace(PTRACE_CONT, t->tid, 0, 0);
		}
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig);
	}
	reply(t->fd, t->tid, 0);
	t->tid = 0;
}

static void on_message(struct run *r, int slot)
{
	int fd = r->conn[slot], i;
	struct rlt_inject_msg m;
	ssize_t n = recv(fd, &m, sizeof m, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == (ssize_t)sizeof m && m.magic == RLT_INJECT_MAGIC) {
		struct tracee *t = find_tracee(r, m.tid);
		if (m.op == RLT_INJECT_ATTACH) {
			on_attach(r, fd, &m);
			return;
		}
		if (m.op == RLT_INJECT_EXEC_FAILED && t && t->fd == fd) {
			on_exec_failed(t);
			return;
		}
	}
	/* end of the connection (a successful exec closes it), or nonsense */
	for (i = 0; i < MAX_CONNS; i++)
		if (r->t[i].tid && r->t[i].fd == fd)
			r->t[i].fd = -1;
	close(fd);
	r->conn[slot] = -1;
}

static void on_stop(struct run *r, pid_t pid, int st)
{
	int ev = st >> 16;
	struct rlt_cli_inject_err err;

	if (ev == PTRACE_EVENT_EXEC) {
		unsigned long former = 0;
		struct tracee *t;
		ptrace(PTRACE_GETEVENTMSG, pid, 0, &former);
		/* a thread that is not its group's leader execs under the leader's id */
		t = find_tracee(r, (pid_t)former);
		if (!t)
			t = find_tracee(r, pid);
		if (inject_image(r, pid, 0, NULL, 0, &err) != 0) {
			logf_(r, "process %d: %s; killing it", (int)pid, err.msg);
			kill(pid, SIGKILL);
		}
		if (t) {
			if (t->fd >= 0)
				reply(t->fd, pid, 0);
			t->tid = 0;
		}
		return;
	}
	if (ev == PTRACE_EVENT_STOP) {
		/* a group stop (SIGSTOP and such): the thread stays stopped as without us */
		if (ptrace(PTRACE_LISTEN, pid, 0, 0) != 0)
			ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
	/* a signal for the program: it gets it */
	ptrace(PTRACE_CONT, pid, 0, (void *)(long)(ev ? 0 : WSTOPSIG(st)));
}

static void reap(struct run *r)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (WIFSTOPPED(st)) {
			on_stop(r, p, st);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			struct tracee *t = find_tracee(r, p);
			if (t)
				t->tid = 0;
			if (p == r->child) {
				r->child_done = 1;
				r->child_status = st;
			}
		}
	}
	if (p < 0 && errno == ECHILD)
		r->none_left = 1;
}

/* Starts the command seized before its exec; returns at its exec stop. */
static int start_child(struct run *r, const sigset_t *oldmask, struct rlt_cli_inject_err *err)
{
	int sync_p[2], err_p[2], st, e, i, rc;
	char go = 'g';

	if (pipe2(sync_p, O_CLOEXEC) != 0)
		return seterr(err, -errno, "cannot make a pipe: %s", strerror(errno));
	if (pipe2(err_p, O_CLOEXEC) != 0) {
		e = errno;
		close(sync_p[0]);
		close(sync_p[1]);
		return seterr(err, -e, "cannot make a pipe: %s", strerror(e));
	}
	r->child = fork();
	if (r->child < 0) {
		e = errno;
		close(sync_p[0]);
		close(sync_p[1]);
		close(err_p[0]);
		close(err_p[1]);
		return seterr(err, -e, "cannot fork: %s", strerror(e));
	}
	if (r->child == 0) {
		/* Waits on a pipe rather than stopping itself: the parent seizes a running process,
		 * and no group stop needs untangling. No new privileges: the filter needs it. */
		ssize_t n;
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		close(sync_p[1]);
		close(err_p[0]);
		e = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			e = errno;
		while ((n = read(sync_p[0], &go, 1)) < 0 && errno == EINTR)
			;
		if (n == 1 && !e) {
			execvp(r->o->argv[0], r->o->argv);
			e = errno;
		}
		if (write(err_p[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(sync_p[0]);
	close(err_p[1]);
	if (ptrace(PTRACE_SEIZE, r->child, 0, (void *)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) != 0) {
		e = errno;
		close(sync_p[1]);
		close(err_p[0]);
		kill(r->child, SIGKILL);
		wait_for(r->child, &st);
		return seterr(err, -e, "ptrace is not allowed here (PTRACE_SEIZE: %s)", strerror(e));
	}
	rc = write(sync_p[1], &go, 1) == 1 ? 0 : -errno;
	close(sync_p[1]);
	for (i = 0; rc == 0; i++) {
		if ((rc = wait_for(r->child, &st)) != 0)
			break;
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC) {
			close(err_p[0]);
			return 0;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			e = 0;
			if (read(err_p[0], &e, sizeof e) != sizeof e)
				e = 0;
			close(err_p[0]);
			r->child = 0;
			if (e)
				return seterr(err, -e, "cannot run %s: %s", r->o->argv[0], strerror(e));
			return seterr(err, -ECHILD, "the command ended before its exec");
		}
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, r->child, 0,
			       (void *)(long)((st >> 16) ? 0 : WSTOPSIG(st)));
	}
	close(err_p[0]);
	kill(r->child, SIGKILL);
	wait_for(r->child, &st);
	r->child = 0;
	return seterr(err, rc, "cannot start the command: %s", strerror(-rc));
}

int rlt_cli_inject_run(const struct rlt_cli_inject_opts *o, int *status,
                       struct rlt_cli_inject_err *err)
{
	static struct run r; /* one command per launcher */
	sigset_t sigs, old;
	int lfd, sfd = -1, i, st;

	memset(&r, 0, sizeof r);
	r.o = o;
	for (i = 0; i < MAX_CONNS; i++)
		r.conn[i] = -1;
	if (!o->argv || !o->argv[0])
		return seterr(err, -EINVAL, "no command to run");
	if (parse_blob(o->blob, o->blob_len, &r.blob, err) != 0)
		return -1;
	if (sizeof(struct rlt_inject_hdr) + o->config_len > UINT32_MAX)
		return seterr(err, -E2BIG, "the config block is too large");
	if ((lfd = make_socket(&r, err)) < 0)
		return -1;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (start_child(&r, &old, err) != 0)
		goto fail;
	if (inject_image(&r, r.child, RLT_INJECT_FIRST, o->readback, o->readback_len, err) != 0) {
		kill(r.child, SIGKILL);
		wait_for(r.child, &st);
		goto fail;
	}
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		seterr(err, -errno, "cannot make a signalfd: %s", strerror(errno));
		kill(r.child, SIGKILL);
		wait_for(r.child, &st);
		goto fail;
	}
	reap(&r); /* a SIGCHLD of the injection is consumed already */
	/* The command's processes outlive its first one (a shell's background job): each may still
	 * exec, and an exec nobody injects fails. So the launcher serves until none is left; as
	 * the command's subreaper, every orphan of it is our child, and waitpid's ECHILD says when
	 * the last one has ended. */
	while (!r.none_left) {
		struct pollfd p[2 + MAX_CONNS];
		int n = 0, slot[2 + MAX_CONNS];
		p[n].fd = sfd, p[n].events = POLLIN, slot[n++] = -1;
		p[n].fd = lfd, p[n].events = POLLIN, slot[n++] = -2;
		for (i = 0; i < MAX_CONNS; i++)
			if (r.conn[i] >= 0)
				p[n].fd = r.conn[i], p[n].events = POLLIN, slot[n++] = i;
		if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (slot[i] == -1) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof si) == sizeof si) {
					if (si.ssi_signo == SIGCHLD)
						continue;
					if (!r.child_done)
						kill(r.child, (int)si.ssi_signo);
					else
						r.none_left = 1; /* told to go: later execs fail EPERM */
				}
			} else if (slot[i] == -2) {
				int c, k;
				while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
					for (k = 0; k < MAX_CONNS && r.conn[k] >= 0; k++)
						;
					if (k == MAX_CONNS)
						close(c);
					else
						r.conn[k] = c;
				}
			} else {
				on_message(&r, slot[i]);
			}
		}
		reap(&r);
	}
	for (i = 0; i < MAX_CONNS; i++)
		if (r.conn[i] >= 0)
			close(r.conn[i]);
	close(sfd);
	close(lfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	st = r.child_status;
	*status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	return 0;
fail:
	close(lfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return -1;
}
