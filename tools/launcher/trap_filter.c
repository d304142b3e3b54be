/*
 * trap_filter.c: which system calls become a SIGSYS in the calling thread.
 *
 * libseccomp writes the body; it cannot test the instruction pointer, so a few instructions of
 * our own go in front: a call made from the handler's code is allowed before anything else is
 * looked at. A filter sees numbers, not files, so sockets are kept at fds from `band` up (the
 * handler moves them there) and read, write and their kin trap only there: a file, a pipe or a
 * terminal costs nothing.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "trap_abi.h"
#include "trap_filter.h"

/* Always ours: the calls that make or take a socket (recvmsg may bring one: SCM_RIGHTS), the
 * calls that could leave SIGSYS blocked, and exec (the new image needs the handler again). */
static const char *const always[] = {
	"socket", "socketpair", "connect", "accept", "accept4", "recvmsg", "rt_sigaction",
	"rt_sigprocmask", "execve", "execveat", "close_range", "exit_group",
};
/* Ours when a rule may apply to them (RLT_TRAP_SENDS, RLT_TRAP_RECVS). */
static const char *const sends[] = {"sendto", "sendmsg", "sendmmsg"};
static const char *const recvs[] = {"recvfrom", "recvmmsg"};

/* Ours when their first fd is in the band: always, or in the class of their data. */
static const char *const on_band_fd[] = {"close", "dup", "fcntl"};
static const char *const sends_on_band_fd[] = {"write", "writev", "pwritev2", "sendfile"};
static const char *const recvs_on_band_fd[] = {"read", "readv", "preadv2"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int rules(scmp_filter_ctx ctx, const char *const *names, size_t n, unsigned nargs,
                 const struct scmp_arg_cmp *cmp, struct rlt_error *err);

/* Ours when they carry a signal mask (the argument that points to it, 0-based). */
static const struct {
	const char *name;
	unsigned arg;
} masks[] = {
	{"ppoll", 3}, {"epoll_pwait", 4}, {"epoll_pwait2", 4}, {"pselect6", 5},
};

/* One argument test (libseccomp's SCMP_A* macros leave a field to the default, which clang's
 * -Wmissing-field-initializers refuses). */
static struct scmp_arg_cmp cmp_arg(unsigned n, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	struct scmp_arg_cmp c = {.arg = n, .op = op, .datum_a = a, .datum_b = b};
	return c;
}

static int rule(scmp_filter_ctx ctx, uint32_t act, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp, struct rlt_error *err)
{
	int nr = seccomp_syscall_resolve_name(name), rc;

	if (nr == __NR_SCMP_ERROR)
		return 0; /* a call this kernel's headers do not know cannot be made either */
	rc = seccomp_rule_add_array(ctx, act, nr, n, cmp);
	return rc ? rlt__fail(err, rc, "seccomp rule for %s: %s", name, strerror(-rc)) : 0;
}

static int rules(scmp_filter_ctx ctx, const char *const *names, size_t n, unsigned nargs,
                 const struct scmp_arg_cmp *cmp, struct rlt_error *err)
{
	for (size_t i = 0; i < n; i++)
		if (rule(ctx, SCMP_ACT_TRAP, names[i], nargs, cmp, err))
			return -1;
	return 0;
}

static int body(scmp_filter_ctx ctx, int band, unsigned covers, struct rlt_error *err)
{
	const uint32_t trap = SCMP_ACT_TRAP;
	struct scmp_arg_cmp c[2];
	size_t i;

	c[0] = cmp_arg(0, SCMP_CMP_GE, (scmp_datum_t)band, 0);
	if (rules(ctx, always, COUNT(always), 0, NULL, err) ||
	    rules(ctx, on_band_fd, COUNT(on_band_fd), 1, c, err))
		return -1;
	if ((covers & RLT_TRAP_SENDS) && (rules(ctx, sends, COUNT(sends), 0, NULL, err) ||
	                                  rules(ctx, sends_on_band_fd, COUNT(sends_on_band_fd), 1,
	                                        c, err)))
		return -1;
	if ((covers & RLT_TRAP_RECVS) && (rules(ctx, recvs, COUNT(recvs), 0, NULL, err) ||
	                                  rules(ctx, recvs_on_band_fd, COUNT(recvs_on_band_fd), 1,
	                                        c, err)))
		return -1;
	/* dup2, dup3: a socket copied down, or whatever held a band fd replaced */
	c[1] = cmp_arg(1, SCMP_CMP_GE, (scmp_datum_t)band, 0);
	if (rule(ctx, trap, "dup2", 1, &c[0], err) || rule(ctx, trap, "dup2", 1, &c[1], err) ||
	    rule(ctx, trap, "dup3", 1, &c[0], err) || rule(ctx, trap, "dup3", 1, &c[1], err))
		return -1;
	/* splice: from a socket (a receive), to a socket (a send) */
	c[1] = cmp_arg(2, SCMP_CMP_GE, (scmp_datum_t)band, 0);
	if (((covers & RLT_TRAP_RECVS) && rule(ctx, trap, "splice", 1, &c[0], err)) ||
	    ((covers & RLT_TRAP_SENDS) && rule(ctx, trap, "splice", 1, &c[1], err)))
		return -1;
	/* epoll_ctl on a socket and the waits trap only once a wait could hold a socket (a
	 * filter the handler stacks then: preload/trap_waits.c), not here: an event loop makes
	 * several per request, and none needs reshaping until then */
	c[1] = cmp_arg(1, SCMP_CMP_EQ, FIONBIO, 0);
	if (rule(ctx, trap, "ioctl", 2, c, err))
		return -1;
	/* FIONREAD: a stream under latency holds its due bytes in its delay line (net_delay.c) */
	c[1] = cmp_arg(1, SCMP_CMP_EQ, FIONREAD, 0);
	if (rule(ctx, trap, "ioctl", 2, c, err))
		return -1;
	/* getsockopt(SO_ERROR) on a socket: how a non-blocking connect went (RLT_NET's
	 * connect=timeout answers it); any other option goes as it is */
	{
		struct scmp_arg_cmp g[3] = {c[0], cmp_arg(1, SCMP_CMP_EQ, SOL_SOCKET, 0),
		                            cmp_arg(2, SCMP_CMP_EQ, SO_ERROR, 0)};
		if (rule(ctx, trap, "getsockopt", 3, g, err))
			return -1;
	}
	for (i = 0; i < sizeof masks / sizeof masks[0]; i++) {
		struct scmp_arg_cmp m = {masks[i].arg, SCMP_CMP_NE, 0, 0};
		if (rule(ctx, trap, masks[i].name, 1, &m, err))
			return -1;
	}
	/* A fork: the child's state of ours is made its own (load.c rlt_pre_forked), so the
	 * handler makes it. A clone that shares memory (a thread, vfork) goes as it is; so does
	 * one with a stack of its own, which could not return through the handler's. clone3
	 * hides its flags in memory: refused, so that the C library falls back to clone. */
	{
		struct scmp_arg_cmp f[2] = {cmp_arg(0, SCMP_CMP_MASKED_EQ, CLONE_VM, 0),
		                            cmp_arg(1, SCMP_CMP_EQ, 0, 0)};
		if (rule(ctx, trap, "clone", 2, f, err) || rule(ctx, trap, "fork", 0, NULL, err) ||
		    rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err))
			return -1;
	}
	/* a filter of the program's own: said once (trap_dispatch.c), then installed */
	c[0] = cmp_arg(0, SCMP_CMP_EQ, PR_SET_SECCOMP, 0);
	if (rule(ctx, trap, "seccomp", 0, NULL, err) || rule(ctx, trap, "prctl", 1, c, err))
		return -1;
	/* io_uring moves data past every hook: programs fall back to ordinary calls */
	if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "io_uring_setup", 0, NULL, err))
		return -1;
	return 0;
}

/* Reads back what libseccomp exported (it writes to an fd only). */
static int export(scmp_filter_ctx ctx, struct sock_filter *out, size_t max, struct rlt_error *err)
{
	int fd = memfd_create("rlthrottle-filter", MFD_CLOEXEC), rc;
	ssize_t n;

	if (fd < 0)
		return rlt__fail(err, -errno, "memfd_create: %s", strerror(errno));
	rc = seccomp_export_bpf(ctx, fd);
	if (rc) {
		close(fd);
		return rlt__fail(err, rc, "seccomp_export_bpf: %s", strerror(-rc));
	}
	n = pread(fd, out, max * sizeof *out, 0);
	close(fd);
	if (n <= 0 || n % (ssize_t)sizeof *out)
		return rlt__fail(err, -EIO, "the exported seccomp program could not be read back");
	if ((size_t)n == max * sizeof *out)
		return rlt__fail(err, -E2BIG, "the seccomp program is longer than %zu instructions",
		                 max);
	return (int)(n / (ssize_t)sizeof *out);
}

int rlt_cli_trap_filter(const struct rlt_cli_trap_spec *spec, struct sock_filter *prog,
                        size_t max, struct rlt_error *err)
{
	const uint32_t lo = (uint32_t)spec->base;
	/* Where a call would trap: the handler's own calls pass. The test comes after the call's
	 * number and arguments, not before them, so that a call the filter always lets through
	 * never reads the instruction pointer: the kernel then caches its answer per number and
	 * runs no filter at all for it (Linux 5.11+). */
	const struct sock_filter ip_test[] = {RLT_TRAP_IP_TEST(spec->base, spec->span)};
	const size_t ntest = sizeof ip_test / sizeof ip_test[0];
	scmp_filter_ctx ctx;
	int n;

	if ((uint64_t)lo + spec->span > UINT32_MAX)
		return rlt__fail(err, -EINVAL, "the handler's range crosses a 4 GiB boundary");
	if (max <= ntest)
		return rlt__fail(err, -E2BIG, "no room for the seccomp program");
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return rlt__fail(err, -ENOMEM, "seccomp_init failed");
	/* another architecture's calls (int 0x80) would pass every rule: refuse them */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS)) ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) {
		seccomp_release(ctx);
		return rlt__fail(err, -EINVAL, "seccomp attributes refused");
	}
	if (body(ctx, spec->band, spec->covers, err) != 0) {
		seccomp_release(ctx);
		return -1;
	}
	n = export(ctx, prog, max - ntest, err);
	seccomp_release(ctx);
	if (n < 0)
		return -1;
	/* every trap of libseccomp's program becomes a jump to the test, appended at its end */
	for (int i = 0; i < n; i++)
		if (prog[i].code == (BPF_RET | BPF_K) && prog[i].k == SECCOMP_RET_TRAP)
			prog[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, (uint32_t)(n - i - 1), 0, 0);
	memcpy(prog + n, ip_test, sizeof ip_test);
	return n + (int)ntest;
}
