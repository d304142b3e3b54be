/*
 * trap_entry.h: the assembly a signal enters and leaves the handler by: trap_entry.S's entries
 * (SIGSYS, a fatal signal, the image's start) and nolibc/signal.c's restorer.
 */
#ifndef RLT_TRAP_ENTRY_H
#define RLT_TRAP_ENTRY_H

#include <signal.h>

/* The SIGSYS action: rlt_trap_sigsys on a stack of ours (rlt_trap_stack_claim). */
void rlt_trap_entry(int sig, siginfo_t *si, void *uc);
/* The action of the fatal signals left at their default: rlt_trap_fatal, the same way. */
void rlt_trap_fatal_entry(int sig, siginfo_t *si, void *uc);
void rlt_trap_restorer(void); /* nolibc/signal.c: its rt_sigreturn is made from our range */
/* The image's entry while the launcher holds it: rlt_trap_init, then the int3 the launcher
 * waits for. */
void rlt_trap_start(void);

#endif
