/*
 * trap_entry.S: the way into the handler of the system-call front (trap_entry.h).
 *
 * The kernel pushes the SIGSYS frame where it can: a Go thread's 32 KiB signal stack, a C
 * thread's own stack, whatever a raw clone left. The decision needs more room than that (a
 * pacing call's iovec slice alone is 16 KiB), so the handler moves to a stack of its own,
 * claimed from a pool for this call only, and leaves it before it gives it back.
 */
	.text

	/* ENTRY name, target: a signal handler that runs target(sig, si, uc) on a stack of ours */
	.macro	ENTRY name, target
	.globl	\name
	.hidden	\name
	.type	\name, @function
\name:
	.cfi_startproc
	pushq	%rbp
	pushq	%rbx
	movq	%rsp, %rbp
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	movq	%rdx, %rdi
	call	rlt_trap_stack_claim	/* top of a stack of our own, or 0 (the call is answered) */
	popq	%rdx
	popq	%rsi
	popq	%rdi
	movq	%rax, %rbx
	testq	%rax, %rax
	jz	1f
	movq	%rax, %rsp
	call	\target
	leaq	-8(%rbp), %rsp		/* 16-byte aligned for the call */
	movq	%rbx, %rdi
	call	rlt_trap_stack_release	/* on the kernel's frame again: the stack is free */
1:	movq	%rbp, %rsp
	popq	%rbx
	popq	%rbp
	ret				/* to the restorer */
	.cfi_endproc
	.size	\name, .-\name
	.endm

	/* the SIGSYS handler */
	ENTRY	rlt_trap_entry, rlt_trap_sigsys
	/* the handler of SIGTERM, SIGHUP and SIGPIPE left at their default (trap_init.c) */
	ENTRY	rlt_trap_fatal_entry, rlt_trap_fatal

	/* the image's entry while the launcher holds it: rdi = the config block, rsi = the
	 * image's first stack pointer (argc, argv, envp, auxv); the result of
	 * rlt_trap_init goes back in rax, at the int3 the launcher waits for */
	.globl	rlt_trap_start
	.hidden	rlt_trap_start
	.type	rlt_trap_start, @function
rlt_trap_start:
	/* the init runs on a stack of the pool too: the thread block at its base holds errno */
	andq	$-16, %rsp
	pushq	%rdi
	pushq	%rsi
	xorl	%edi, %edi
	call	rlt_trap_stack_claim
	popq	%rsi
	popq	%rdi
	testq	%rax, %rax
	jz	2f
	movq	%rsp, %rbx
	movq	%rax, %rsp
	pushq	%rbx
	pushq	%rax
	call	rlt_trap_init
	popq	%rdi			/* the stack's top, to give back */
	popq	%rbx
	movq	%rax, %r12
	movq	%rbx, %rsp
	call	rlt_trap_stack_release
	movq	%r12, %rax
	int3
2:	movq	$-12, %rax		/* -ENOMEM */
	int3
	.size	rlt_trap_start, .-rlt_trap_start

	.section .note.GNU-stack,"",@progbits
