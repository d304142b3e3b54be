/*
 * trap_stack.h: the stacks the handler runs on (trap_stack.c), one per call in progress: claimed
 * by the entry (trap_entry.S) when a SIGSYS arrives, given back when the call returns.
 */
#ifndef RLT_TRAP_STACK_H
#define RLT_TRAP_STACK_H

#include <stdint.h>
#include <ucontext.h>

/* A stack of ours for the call that trapped with the context uc: its top, or 0 when none could
 * be had (the call is then answered -ENOMEM in uc). */
uintptr_t rlt_trap_stack_claim(ucontext_t *uc);
/* The stack of that top is free again. */
void rlt_trap_stack_release(uintptr_t top);
/* While the call runs, its stack is the thread's signal stack (when the thread had one), so
 * that a nested signal lands below us. */
void rlt_trap_stack_enter(void);

#endif
