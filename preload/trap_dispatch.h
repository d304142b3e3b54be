/*
 * trap_dispatch.h: the SIGSYS handler proper (trap_dispatch.c), run by the entry (trap_entry.S)
 * on a stack of ours: a trapped call handed to the preload's hook of the same call.
 *
 * The system-call front inside the program (rlthrottle(7), "The system-call front"): a seccomp
 * filter turns the program's network calls into a SIGSYS in the calling thread; the handler
 * hands each to the preload's own hook, which decides with the core and makes the real call
 * from our code, which the filter lets through. The launcher injects all of it into the new
 * image at exec (RLT_TRAP_BASE). No C library here: the program owns %fs and its TLS. Each file
 * of the front has its header: trap_entry.h, trap_stack.h, trap_dispatch.h, trap_signals.h,
 * trap_init.h, trap_band.h, and trap_exec.h (the exec protocol's requester).
 */
#ifndef RLT_TRAP_DISPATCH_H
#define RLT_TRAP_DISPATCH_H

#include <signal.h>
#include <ucontext.h>

void rlt_trap_sigsys(int sig, siginfo_t *si, ucontext_t *uc);

#endif
