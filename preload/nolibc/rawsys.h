/*
 * rawsys.h: system calls made with the `syscall` instruction, for preload/nolibc and
 * preload/real_sys.c. rlt_trap_ret turns the kernel's -errno into the C library's -1 and errno
 * (musl's __syscall_ret), errno living in the thread block (nolibc.h).
 */
#ifndef RLT_TRAP_RAWSYS_H
#define RLT_TRAP_RAWSYS_H

#include "nolibc.h"

static inline long rlt_trap_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	return ret;
}

#define RLT_SYS(n, a, b, c, d, e, f)                                                             \
	rlt_trap_sys6((long)(n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define RLT_SYS0(n) RLT_SYS(n, 0, 0, 0, 0, 0, 0)
#define RLT_SYS1(n, a) RLT_SYS(n, a, 0, 0, 0, 0, 0)
#define RLT_SYS2(n, a, b) RLT_SYS(n, a, b, 0, 0, 0, 0)
#define RLT_SYS3(n, a, b, c) RLT_SYS(n, a, b, c, 0, 0, 0)
#define RLT_SYS4(n, a, b, c, d) RLT_SYS(n, a, b, c, d, 0, 0)

static inline long rlt_trap_ret(long r)
{
	if ((unsigned long)r > -4096UL) {
		rlt_trap_self()->err = (int)-r;
		return -1;
	}
	return r;
}

#endif
