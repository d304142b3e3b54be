/*
 * trap_signals.c: SIGSYS stays deliverable whatever mask the program asks for.
 *
 * A trapped call that finds SIGSYS blocked is not delivered: the kernel resets SIGSYS to its
 * default and the process dies. Go installs its handlers with a full sa_mask and blocks every
 * signal around clone; many C programs block all signals in a worker thread. So every way a
 * program sets a mask is trapped and made here with SIGSYS left out: rt_sigprocmask, an
 * action's sa_mask, and the masks ppoll, pselect6 and epoll_pwait{,2} apply while they wait.
 * The mask rt_sigreturn restores is the one the kernel saved at delivery, which never holds
 * SIGSYS (a handler that edits uc_sigmask to add it is not covered). The program's own
 * SIGSYS action is kept aside, not installed: ours must stay.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "rawsys.h"
#include "trap_signals.h"

#define SIGSYS_BIT (1ull << (SIGSYS - 1))

/* The program's SIGSYS action, as it set it; SIG_DFL until it sets one. */
static struct ksigaction kept;
static _Atomic int kept_lock;

static void lock(void)
{
	int z = 0;
	while (!atomic_compare_exchange_weak(&kept_lock, &z, 1))
		z = 0;
}

static void unlock(void)
{
	atomic_store(&kept_lock, 0);
}

long rlt_trap_sigaction(long sig, long act, long oact, long size)
{
	if (sig == SIGSYS) {
		struct ksigaction old;
		if (size != sizeof(uint64_t))
			return -EINVAL;
		lock();
		old = kept;
		if (act)
			memcpy(&kept, (const void *)act, sizeof kept);
		unlock();
		if (oact)
			memcpy((void *)oact, &old, sizeof old);
		return 0;
	}
	if (act && size == sizeof(uint64_t)) {
		struct ksigaction a;
		memcpy(&a, (const void *)act, sizeof a);
		a.mask &= ~SIGSYS_BIT;
		return rlt_trap_sys6(SYS_rt_sigaction, sig, (long)&a, oact, size, 0, 0);
	}
	return rlt_trap_sys6(SYS_rt_sigaction, sig, act, oact, size, 0, 0);
}

long rlt_trap_sigprocmask(ucontext_t *uc, long how, long set, long oset, long size)
{
	/* The mask the program had when it trapped is the one rt_sigreturn restores at the end
	 * of the handler (uc_sigmask): a mask set in here would be undone. So the call is made on
	 * that saved mask, SIGSYS left out. */
	uint64_t m, old;

	memcpy(&old, &uc->uc_sigmask, sizeof old);
	if (size != sizeof m)
		return -EINVAL;
	if (set) {
		memcpy(&m, (const void *)set, sizeof m);
		switch (how) {
		case SIG_BLOCK: m = old | m; break;
		case SIG_UNBLOCK: m = old & ~m; break;
		case SIG_SETMASK: break;
		default: return -EINVAL;
		}
		/* SIGKILL and SIGSTOP cannot be blocked; SIGSYS must not be */
		m &= ~(SIGSYS_BIT | 1ull << (SIGKILL - 1) | 1ull << (SIGSTOP - 1));
		memcpy(&uc->uc_sigmask, &m, sizeof m);
	}
	if (oset)
		memcpy((void *)oset, &old, sizeof old);
	return 0;
}

long rlt_trap_masked_wait(long nr, const long a[6])
{
	long b[6];
	uint64_t m;
	struct {
		const uint64_t *ss;
		size_t len;
	} ps;

	memcpy(b, a, sizeof b);
	if (nr == SYS_pselect6) {
		/* the mask comes by way of a pair: its address and its size */
		memcpy(&ps, (const void *)a[5], sizeof ps);
		if (ps.ss && ps.len == sizeof m) {
			memcpy(&m, ps.ss, sizeof m);
			m &= ~SIGSYS_BIT;
			ps.ss = &m;
		}
		b[5] = (long)&ps;
	} else {
		int at = nr == SYS_ppoll ? 3 : 4; /* epoll_pwait, epoll_pwait2 */
		if (b[at] && b[at + 1] == sizeof m) {
			memcpy(&m, (const void *)b[at], sizeof m);
			m &= ~SIGSYS_BIT;
			b[at] = (long)&m;
		}
	}
	return rlt_trap_sys6(nr, b[0], b[1], b[2], b[3], b[4], b[5]);
}

void rlt_trap_forward(int sig, siginfo_t *si, ucontext_t *uc)
{
	struct ksigaction k;

	lock();
	k = kept;
	unlock();
	if (k.handler == SIG_IGN)
		return;
	if (k.handler == SIG_DFL) {
		/* what SIGSYS does to a program that left it alone: it dies of it */
		struct ksigaction dfl = {0};
		uint64_t m = SIGSYS_BIT;
		rlt_trap_sys6(SYS_rt_sigaction, SIGSYS, (long)&dfl, 0, sizeof(uint64_t), 0, 0);
		rlt_trap_sys6(SYS_rt_sigprocmask, SIG_UNBLOCK, (long)&m, 0, sizeof m, 0, 0);
		rlt_trap_sys6(SYS_tgkill, rlt_trap_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0),
		              rlt_trap_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0), SIGSYS, 0, 0, 0);
		return;
	}
	if (k.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))k.handler)(sig, si, uc);
	else
		((void (*)(int))k.handler)(sig);
}
