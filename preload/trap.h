/*
 * trap.h: the system-call front inside the program (rlthrottle(7), "The system-call front").
 *
 * A seccomp filter turns the program's network calls into a SIGSYS in the calling thread;
 * the handler hands each to the preload's own hook, which decides with the core and makes the
 * real call from our code, which the filter lets through. The launcher injects all of it into
 * the new image at exec (RLT_TRAP_BASE). No C library here: the program owns %fs and its TLS.
 */
#ifndef RLT_TRAP_H
#define RLT_TRAP_H

#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "rlthrottle.h"

#include "nolibc.h"
#include "rawsys.h" /* rlt_trap_sys6 */
#include "start.h"
#include "trap_abi.h"

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

/* trap_entry.S */
void rlt_trap_entry(int sig, siginfo_t *si, void *uc);
void rlt_trap_fatal_entry(int sig, siginfo_t *si, void *uc);
void rlt_trap_restorer(void); /* nolibc/signal.c: its rt_sigreturn is made from our range */

/* trap_stack.c */
uintptr_t rlt_trap_stack_claim(ucontext_t *uc);
void rlt_trap_stack_release(uintptr_t top);
void rlt_trap_stack_enter(void);

/* trap_dispatch.c: the SIGSYS handler proper, on a stack of ours. */
void rlt_trap_sigsys(int sig, siginfo_t *si, ucontext_t *uc);

/* trap_signals.c: calls that set a signal mask or an action, SIGSYS left out of both. */
long rlt_trap_sigaction(long sig, long act, long oact, long size);
long rlt_trap_sigprocmask(ucontext_t *uc, long how, long set, long oset, long size);
long rlt_trap_masked_wait(long nr, const long a[6]);
/* the program's own SIGSYS action, kept aside: a SIGSYS that is not the filter's goes there */
void rlt_trap_forward(int sig, siginfo_t *si, ucontext_t *uc);

/* trap_init.c: the start in a new image (rlt_trap_start calls it), exec, exit. */
struct rlt_inject_hdr;
long rlt_trap_init(struct rlt_inject_hdr *hdr, void *sp);
/* The rules from the environment, as the preload loads them (generation: 0 for the command's
 * own image, 1 and up for later ones, which RLT_INHERIT=0 leaves unthrottled). */
int rlt_trap_load(unsigned generation, struct rlt_error *err);
long rlt_trap_exec(long nr, const long a[6]);
void rlt_trap_fatal(int sig, siginfo_t *si, ucontext_t *uc);
void rlt_trap_exit(int status) __attribute__((noreturn));
void rlt_trap_start(void);

/* trap_band.c: sockets live at fds from the band up, so that file I/O is never trapped. */
extern int rlt_trap_band;
int rlt_trap_to_band(int fd, int cloexec);
/* fds below the band that are sockets all the same: their fd calls trap too (a small filter
 * stacked on the first); at the start, those the image inherited. */
int rlt_trap_watch(const int *fds, int n);
void rlt_trap_watch_inherited(void);
/* The waits (poll, select, epoll) trap from now on: once, at the first throttled socket. */
void rlt_trap_watch_waits(void);
/* A filter for the data calls of classes (trap_abi.h) the launcher's filter does not trap. */
void rlt_trap_watch_class(unsigned classes);

#endif
