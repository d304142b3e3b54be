/*
 * trap_signals.h: SIGSYS kept deliverable (trap_signals.c): the calls that set a signal mask or
 * an action are made with SIGSYS left out of both, and the program's own SIGSYS action is kept
 * aside; with the kernel's struct sigaction they pass.
 */
#ifndef RLT_TRAP_SIGNALS_H
#define RLT_TRAP_SIGNALS_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

/* The kernel's struct sigaction on x86_64 (not the C library's): the handler's own calls of
 * rt_sigaction pass it as is. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

long rlt_trap_sigaction(long sig, long act, long oact, long size);
long rlt_trap_sigprocmask(ucontext_t *uc, long how, long set, long oset, long size);
long rlt_trap_masked_wait(long nr, const long a[6]);
/* the program's own SIGSYS action, kept aside: a SIGSYS that is not the filter's goes there */
void rlt_trap_forward(int sig, siginfo_t *si, ucontext_t *uc);

#endif
