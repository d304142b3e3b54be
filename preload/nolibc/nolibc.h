/*
 * nolibc.h: the C library subset the in-process handler links (issue 21, item 5), as its
 * callers see it. The freestanding build (make trap-elf) pre-includes this header in every
 * file, so that the core's per-thread variables (redis_client.h, engine_lock.h) and errno find the
 * thread block below instead of TLS: in a static or Go program the program owns %fs.
 *
 * The thread block contract: the handler runs on a stack of its own per thread, RLT_TRAP_STACK
 * bytes, aligned to RLT_TRAP_STACK, and a struct rlt_trap_thread sits at its lowest address
 * (zeroed before the thread's first use). Whoever switches to that stack (the SIGSYS entry, a
 * test) sets it up; everything in the blob finds it from the stack pointer alone.
 */
#ifndef RLT_NOLIBC_H
#define RLT_NOLIBC_H

#if !defined(__x86_64__)
#error "preload/nolibc is x86_64 only (raw system calls, the vDSO, the signal restorer): build trap-elf on x86_64"
#endif

#ifdef RLT_NOLIBC
/* Every name of the blob is its own (no shared object, no symbol table to anyone): declared
 * hidden too, every access is PC-relative (clang would go through a GOT for extern data, which
 * the linker cannot relax above 2 GiB). */
#pragma GCC visibility push(hidden)
#endif

#include <stdint.h>

#define RLT_TRAP_STACK (64 * 1024)

struct rlt_trap_thread {
	int err;                  /* errno (__errno_location) */
	uint32_t lock_self;       /* engine_lock.c: this thread's lock id (rlt__lock_self) */
	int internal;             /* redis_client.h: the library's own calls pass (rlt__internal) */
	int refilling;            /* scope_redis.h: this thread is in a Redis round trip */
	int alt_moved;            /* trap_stack.c: the thread's signal stack is ours meanwhile */
	void *uc;                 /* the trapped call's context (ucontext_t): rax gets the answer */
};

/* The block of the stack this code runs on. */
static inline __attribute__((always_inline)) struct rlt_trap_thread *rlt_trap_self(void)
{
	uintptr_t sp;
	__asm__("mov %%rsp, %0" : "=r"(sp));
	return (struct rlt_trap_thread *)(sp & ~(uintptr_t)(RLT_TRAP_STACK - 1));
}

/* What the loader hands the blob at its entry point, rlt_trap_libc_init (init.c of nolibc). */
struct rlt_trap_libc_cfg {
	char **environ;            /* NULL-terminated "NAME=value" strings, kept alive by the caller */
	const unsigned long *auxv; /* the process's auxv (type, value pairs up to AT_NULL), or NULL */
};

#endif
