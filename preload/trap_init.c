/*
 * trap_init.c: the handler's start in a new image, and the calls that end an image (exec,
 * exit).
 *
 * The launcher stops the program at its exec, maps our code at RLT_TRAP_BASE and runs
 * rlt_trap_start (trap_entry.S) on a stack of its own with the config block: we load the rules
 * as the preload does, put our SIGSYS handler in, and install the filter, last, so that
 * nothing of the init is trapped. Then the launcher lets go and the program starts.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "load.h"
#include "settings.h"
#include "inject_proto.h"
#include "net.h"
#include "trap_band.h"
#include "trap_entry.h"
#include "trap_init.h"
#include "trap_signals.h"
#include "trap_stack.h"
#include "trap_waits.h"
#include "rawsys.h"
#include "start.h"
#include "trap_abi.h"
#include "rlthrottle.h"
#include "trap_exec.h"

/* What a later exec needs of the block: the launcher, to ask for the next injection. */
static struct {
	int32_t launcher;
	char sock[64];
} home;

static long failed(struct rlt__trap_cfg *cfg, long code, const char *msg)
{
	size_t n = strlen(msg);
	if (n >= sizeof cfg->msg)
		n = sizeof cfg->msg - 1;
	memcpy(cfg->msg, msg, n);
	cfg->msg[n] = '\0';
	return code;
}

static void catch_fatal_signals(void);

int rlt_trap_load(unsigned generation, struct rlt_error *err)
{
	struct rlt__settings set;

	if (rlt__settings_read(&set, err) != 0)
		return -1;
	/* RLT_INHERIT=0: a program exec'd by the command runs unthrottled; the filter outlives
	 * the exec, so the handler is there all the same, passing every call through */
	if (generation == 0 || set.inherit) {
		if (rlt_pre_load(&set, err) != 0)
			return -1;
	}
	rlt_pre_go();
	return 0;
}

long rlt_trap_init(struct rlt_inject_hdr *hdr, void *sp)
{
	struct rlt__trap_cfg *cfg = (struct rlt__trap_cfg *)((char *)hdr + hdr->opaque_off);
	struct rlt_error err = {{0}};
	struct ksigaction sa = {
		.handler = (void *)rlt_trap_entry,
		/* SA_NODEFER: a handler of the program that runs while we wait, and makes a
		 * trapped call, must find SIGSYS deliverable */
		.flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTORER,
		.restorer = (void *)rlt_trap_restorer,
		.mask = 0,
	};
	int first = (hdr->flags & RLT_INJECT_FIRST) != 0;
	struct sock_fprog prog;
	long rc;

	if (hdr->opaque_len < sizeof *cfg || cfg->magic != RLT_TRAP_MAGIC ||
	    cfg->version != RLT_TRAP_VERSION)
		return -EPROTO; /* no message: the block is not ours to write in */
	rlt_trap_libc_start(sp);
	home.launcher = hdr->launcher_pid;
	memcpy(home.sock, hdr->sockname, sizeof home.sock);
	rlt_trap_band = cfg->band;

	if (rlt_trap_load(first ? 0 : 1, &err) != 0)
		return failed(cfg, -EINVAL, err.msg);
	rc = rlt_trap_sys6(SYS_rt_sigaction, SIGSYS, (long)&sa, 0, sizeof(uint64_t), 0, 0);
	if (rc < 0)
		return failed(cfg, rc, "cannot install the SIGSYS handler");
	{
		/* a mask inherited across exec with SIGSYS blocked would kill at the first trap */
		uint64_t m = 1ull << (SIGSYS - 1);
		rlt_trap_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&m, 0, sizeof m, 0, 0);
	}
	if (rlt_pre_summary_wanted() || rlt_pre_publishing())
		catch_fatal_signals();
	if (first) {
		/* last: nothing of the init above is trapped */
		rlt_trap_sys6(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0);
		prog.len = (unsigned short)cfg->nfilter;
		prog.filter = cfg->filter;
		rc = rlt_trap_sys6(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (long)&prog, 0, 0, 0);
		if (rc == -EPERM || rc == -EACCES)
			return failed(cfg, rc, "seccomp is forbidden here (a container profile or a "
			                       "filter of the caller's refuses seccomp()): --seccomp "
			                       "cannot throttle");
		if (rc == -ENOSYS || rc == -EINVAL)
			return failed(cfg, rc, "this kernel has no seccomp filters: --seccomp cannot "
			                       "throttle");
		if (rc < 0)
			return failed(cfg, rc, "the kernel refused the seccomp filter");
	}
	rlt_trap_watch_inherited();
	{
		const unsigned *n = rlt_pre_rules.n;
		unsigned need = 0;
		if (n[RLT_VAR_SEND] || n[RLT_VAR_CONNECT] || n[RLT_VAR_CONNS])
			need |= RLT_TRAP_SENDS;
		if (n[RLT_VAR_RECV])
			need |= RLT_TRAP_RECVS;
		if (rlt__net_wanted)
			need |= RLT_TRAP_SENDS | RLT_TRAP_RECVS;
		if (need & ~cfg->covers)
			rlt_trap_watch_class(need & ~cfg->covers);
	}
	/* the waits trap from here when a hold can begin inside a call (trap_waits.c) */
	rlt_trap_waits_start();
	return 0;
}

/* A fatal signal the program left at its default: the summary and the page go, then the
 * process dies of the signal, as under the preload (init.c). Runs on a stack of ours
 * (rlt_trap_fatal_entry). */
void rlt_trap_fatal(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct ksigaction dfl = {0};
	uint64_t m = 1ull << (sig - 1);

	(void)si;
	(void)uc;
	rlt_trap_stack_enter();
	rlt_pre_write_stats();
	rlt_pre_unpublish();
	rlt_trap_sys6(SYS_rt_sigaction, sig, (long)&dfl, 0, sizeof(uint64_t), 0, 0);
	rlt_trap_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&m, 0, sizeof m, 0, 0);
	rlt_trap_sys6(SYS_tgkill, rlt_trap_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0),
	              rlt_trap_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0), sig, 0, 0, 0);
}

/* Only signals the image starts with at their default: a handler the program installs later
 * replaces ours (its rt_sigaction is made as asked). */
static void catch_fatal_signals(void)
{
	static const int sigs[] = {SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct ksigaction old, sa = {
			.handler = (void *)rlt_trap_fatal_entry,
			.flags = SA_SIGINFO | SA_ONSTACK | SA_RESTORER,
			.restorer = (void *)rlt_trap_restorer,
		};
		if (rlt_trap_sys6(SYS_rt_sigaction, sigs[i], 0, (long)&old, sizeof(uint64_t), 0, 0) == 0 &&
		    old.handler == SIG_DFL)
			rlt_trap_sys6(SYS_rt_sigaction, sigs[i], (long)&sa, 0, sizeof(uint64_t), 0, 0);
	}
}

long rlt_trap_exec(long nr, const long a[6])
{
	int tid = (int)rlt_trap_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0), fd;
	long rc;

	/* The new image keeps the filter but not the handler: without the launcher to put one
	 * in, its first trapped call would kill it. So the exec waits for the launcher to
	 * attach, and fails with EPERM (what a denied call gets from a seccomp policy) when the
	 * launcher is gone. */
	int hid;

	fd = rlt_trap_exec_request(home.sock, tid);
	if (fd < 0)
		return -EPERM;
	/* the page is the image's: its name goes now, back if the exec fails (load.c) */
	hid = rlt_pre_exec_begin();
	rc = rlt_trap_sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	/* still here: the exec failed, and the launcher lets go of us */
	rlt_trap_exec_failed(fd, tid, (int)rc);
	rlt_pre_exec_failed(hid);
	return rc;
}

void rlt_trap_exit(int status)
{
	rlt_trap_run_atexit();
	rlt_pre_write_stats();
	rlt_pre_unpublish();
	for (;;)
		rlt_trap_sys6(SYS_exit_group, status, 0, 0, 0, 0, 0);
}
