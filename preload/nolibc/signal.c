/*
 * signal.c: sigaction through rt_sigaction with a restorer of our own (the kernel returns
 * from a handler through it), and what init.c builds on it: signal, sigemptyset.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

#include "rawsys.h"

/* The rt_sigaction argument as the kernel reads it (not the C library's struct sigaction). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#define RLT_SA_RESTORER 0x04000000

void rlt_trap_restorer(void) __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".p2align 4\n"
        ".globl rlt_trap_restorer\n"
        ".hidden rlt_trap_restorer\n"
        ".type rlt_trap_restorer,@function\n"
        "rlt_trap_restorer:\n"
        "\tmov $15, %eax\n" /* SYS_rt_sigreturn */
        "\tsyscall\n"
        "\thlt\n"
        ".size rlt_trap_restorer,.-rlt_trap_restorer\n");

int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old)
{
	struct ksigaction k, ko;
	long r;

	if (act) {
		k.handler = (void *)act->sa_handler;
		k.flags = (unsigned long)act->sa_flags | RLT_SA_RESTORER;
		k.restorer = (void *)rlt_trap_restorer;
		memcpy(&k.mask, &act->sa_mask, sizeof k.mask);
	}
	r = RLT_SYS4(SYS_rt_sigaction, sig, act ? &k : NULL, old ? &ko : NULL, sizeof k.mask);
	if (rlt_trap_ret(r) == -1)
		return -1;
	if (old) {
		memset(old, 0, sizeof *old);
		old->sa_handler = (void (*)(int))ko.handler;
		old->sa_flags = (int)ko.flags;
		old->sa_restorer = (void (*)(void))ko.restorer;
		memcpy(&old->sa_mask, &ko.mask, sizeof ko.mask);
	}
	return 0;
}

int sigemptyset(sigset_t *set)
{
	memset(set, 0, sizeof *set);
	return 0;
}

void (*signal(int sig, void (*handler)(int)))(int)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}
