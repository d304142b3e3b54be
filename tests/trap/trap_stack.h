/*
 * trap_stack.h: runs a function on a stack laid out as the in-process handler's are
 * (preload/nolibc/nolibc.h): RLT_TRAP_STACK bytes aligned to their size, the thread block
 * zeroed at the lowest address. Code of the freestanding build finds errno and its per-thread
 * variables there, so a test must call it on such a stack, never on its own.
 */
#ifndef RLT_TEST_TRAP_STACK_H
#define RLT_TEST_TRAP_STACK_H

#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "nolibc.h"

struct trap_stack {
	void *base; /* RLT_TRAP_STACK bytes, the thread block at its start */
	ucontext_t caller, callee;
	void (*fn)(void *);
	void *arg;
};

static struct trap_stack *trap_stack_running;

static void trap_stack_entry(void)
{
	struct trap_stack *s = trap_stack_running;
	s->fn(s->arg);
}

static inline void *trap_stack_new(void)
{
	void *base = aligned_alloc(RLT_TRAP_STACK, RLT_TRAP_STACK);
	if (base)
		memset(base, 0, sizeof(struct rlt_trap_thread));
	return base;
}

/* fn(arg) on the stack at base (from trap_stack_new), then back here. */
static inline int trap_stack_call(void *base, void (*fn)(void *), void *arg)
{
	struct trap_stack s = {.base = base, .fn = fn, .arg = arg};

	if (getcontext(&s.callee) != 0)
		return -1;
	s.callee.uc_stack.ss_sp = (char *)base + sizeof(struct rlt_trap_thread);
	s.callee.uc_stack.ss_size = RLT_TRAP_STACK - sizeof(struct rlt_trap_thread);
	s.callee.uc_link = &s.caller;
	makecontext(&s.callee, trap_stack_entry, 0);
	trap_stack_running = &s;
	return swapcontext(&s.caller, &s.callee);
}

static inline struct rlt_trap_thread *trap_stack_block(void *base)
{
	return base;
}

#endif
