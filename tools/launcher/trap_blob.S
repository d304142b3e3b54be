/*
 * trap_blob.S: the handler's ELF (make trap-elf), carried inside the launcher, so that the
 * command and the code injected into it always come from one build.
 */
	.section .rodata
	.balign	64
	.globl	rlt_cli_trap_blob
	.hidden	rlt_cli_trap_blob
rlt_cli_trap_blob:
	.incbin	RLT_TRAP_ELF
	.globl	rlt_cli_trap_blob_end
	.hidden	rlt_cli_trap_blob_end
rlt_cli_trap_blob_end:

	.section .note.GNU-stack,"",@progbits
