/*
 * trap_stack.c: the stacks the handler runs on, one per call in progress (trap_entry.S).
 *
 * A stack is claimed when a SIGSYS arrives and given back when the call returns: a thread
 * blocked in a receive holds one, a thread that makes no trapped call holds none, and no
 * per-thread state is kept between calls (there is no TLS to keep it in). Each stack is
 * RLT_TRAP_STACK bytes aligned to its size, with the call's thread block at its base, so that
 * rlt_trap_self() is a mask of the stack pointer. Stacks come in chunks of 64 mapped as they
 * are needed, and are never unmapped: a program's peak of calls in progress bounds them.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "nolibc.h"
#include "rawsys.h"
#include "trap_stack.h"

#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1u << 31)
#endif

#define PER_CHUNK 64
#define MAX_CHUNKS 1024 /* 65,536 calls in progress at once */

static _Atomic(char *) chunks[MAX_CHUNKS];
static _Atomic uint64_t used[MAX_CHUNKS];
static _Atomic unsigned nchunks;

static char *map_chunk(void)
{
	size_t len = (size_t)PER_CHUNK * RLT_TRAP_STACK + RLT_TRAP_STACK;
	long p = rlt_trap_sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
	                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	if (p < 0 && p > -4096)
		return NULL;
	a = ((uintptr_t)p + RLT_TRAP_STACK - 1) & ~(uintptr_t)(RLT_TRAP_STACK - 1);
	return (char *)a;
}

/* One more chunk; 0 when none can be had. No lock: a signal handler's call may need a stack
 * while its own thread is here. Two threads that grow at once both map one, the first to
 * store it wins, and the other's stays mapped, unused (a race of the first moments at most). */
static int grow(unsigned seen)
{
	char *c, *none = NULL;

	if (seen >= MAX_CHUNKS)
		return 0;
	if (atomic_load(&chunks[seen]) == NULL) {
		if (!(c = map_chunk()))
			return 0;
		atomic_compare_exchange_strong(&chunks[seen], &none, c);
	}
	atomic_compare_exchange_strong(&nchunks, &seen, seen + 1);
	return 1;
}

/* The block of the pool stack that p lies on, or NULL. */
static const struct rlt_trap_thread *outer_of(const char *p)
{
	unsigned n = atomic_load_explicit(&nchunks, memory_order_acquire);

	for (unsigned i = 0; i < n; i++) {
		const char *c = atomic_load_explicit(&chunks[i], memory_order_relaxed);
		if (p >= c && p < c + (size_t)PER_CHUNK * RLT_TRAP_STACK)
			return (const struct rlt_trap_thread *)((uintptr_t)p &
			                                        ~(uintptr_t)(RLT_TRAP_STACK - 1));
	}
	return NULL;
}

static char *claim(void)
{
	for (int tries = 0; tries < MAX_CHUNKS + 2; tries++) {
		unsigned n = atomic_load_explicit(&nchunks, memory_order_acquire);
		for (unsigned i = 0; i < n; i++) {
			uint64_t w = atomic_load_explicit(&used[i], memory_order_relaxed);
			while (~w) {
				unsigned b = (unsigned)__builtin_ctzll(~w);
				if (atomic_compare_exchange_weak_explicit(&used[i], &w, w | (1ull << b),
				                                          memory_order_acquire,
				                                          memory_order_relaxed))
					return atomic_load(&chunks[i]) + (size_t)b * RLT_TRAP_STACK;
			}
		}
		if (!grow(n))
			return NULL;
	}
	return NULL;
}

uintptr_t rlt_trap_stack_claim(ucontext_t *uc)
{
	char *base = claim();
	struct rlt_trap_thread *t;

	if (!base) {
		/* no stack, no decision: the call fails as a call short of memory does */
		if (uc)
			uc->uc_mcontext.gregs[REG_RAX] = -ENOMEM;
		return 0;
	}
	t = (struct rlt_trap_thread *)base;
	memset(t, 0, sizeof *t);
	t->uc = uc;
	/* A call made by a signal handler that interrupted one of ours, on its stack: what the
	 * thread is in the middle of (its own network calls, a Redis round trip) is the
	 * thread's, so the nested call starts from it (the preload keeps these in TLS). */
	if (uc) {
		const struct rlt_trap_thread *outer = outer_of((const char *)uc);
		if (outer) {
			t->internal = outer->internal;
			t->refilling = outer->refilling;
			t->lock_self = outer->lock_self;
		}
	}
	return (uintptr_t)base + RLT_TRAP_STACK;
}

void rlt_trap_stack_release(uintptr_t top)
{
	char *base = (char *)(top - RLT_TRAP_STACK);
	struct rlt_trap_thread *t = (struct rlt_trap_thread *)base;
	unsigned n = atomic_load_explicit(&nchunks, memory_order_acquire);

	if (t->alt_moved) {
		/* the thread's own signal stack again, as the kernel saved it in the frame; never
		 * ours left behind, where a later frame would land on a stack another call holds */
		stack_t old = ((ucontext_t *)t->uc)->uc_stack, off = {.ss_flags = SS_DISABLE};
		old.ss_flags &= SS_AUTODISARM;
		if (rlt_trap_sys6(SYS_sigaltstack, (long)&old, 0, 0, 0, 0, 0) != 0)
			rlt_trap_sys6(SYS_sigaltstack, (long)&off, 0, 0, 0, 0, 0);
	}
	for (unsigned i = 0; i < n; i++) {
		char *c = atomic_load_explicit(&chunks[i], memory_order_relaxed);
		if (base >= c && base < c + (size_t)PER_CHUNK * RLT_TRAP_STACK) {
			unsigned b = (unsigned)((base - c) / RLT_TRAP_STACK);
			atomic_fetch_and_explicit(&used[i], ~(1ull << b), memory_order_release);
			return;
		}
	}
}

void rlt_trap_stack_enter(void)
{
	struct rlt_trap_thread *t = rlt_trap_self();
	stack_t ours = {.ss_sp = (char *)t, .ss_size = RLT_TRAP_STACK, .ss_flags = 0};

	/* A thread with a signal stack of its own (every Go thread) would have the next signal
	 * pushed at the top of it, over the SIGSYS frame this call returns through: while we run,
	 * this stack is its signal stack, so a nested signal lands below us, and a Go handler
	 * finds itself on the signal stack it expects. */
	/* the kernel saves the thread's flags, not SS_DISABLE, in the frame: a thread with no
	 * signal stack has a size of 0 there */
	if (((ucontext_t *)t->uc)->uc_stack.ss_size != 0 &&
	    rlt_trap_sys6(SYS_sigaltstack, (long)&ours, 0, 0, 0, 0, 0) == 0)
		t->alt_moved = 1;
}
