/* The injector: runs a command with the in-process handler's blob mapped into it at its exec
 * (issue 21, item 3), and into every later image of the command that asks for it.
 *
 * What the blob must be (checked: rlt_cli_inject_check_blob, inject_image.h): a static x86-64 ET_EXEC, no
 * PT_INTERP/PT_DYNAMIC/PT_TLS, its PT_LOADs in [RLT_INJECT_BASE, +RLT_INJECT_SIZE)
 * (src/inject_proto.h), its entry in an executable segment. The entry is an init called with
 * one argument (rdi: the config block, struct rlt_inject_hdr then the opaque bytes), on a
 * 64 KiB stack of its own (rsp + 8 aligned to 16, as after a call), and it ends with an int3
 * (or returns: its return address holds one), 0 or -errno in eax, within 10 s. It runs before
 * the program's first instruction; every register and the FPU state are put back after it.
 *
 * What the filter must let through from anywhere: mmap, mprotect and munmap (the injector makes
 * them from the program's entry point, outside the window, also in an image that inherited
 * the filter and has no handler yet).
 *
 * The command and the threads seized before their exec are traced with PTRACE_O_EXITKILL: if
 * the launcher dies while one is attached (the moments around an exec) it dies too, rather
 * than run on with the filter and no handler. Attached only then, a tracer such as strace or
 * gdb can attach to the program the rest of the time (and while one is, an exec inside the
 * program cannot be seized: it fails with EPERM). */
#ifndef RLT_CLI_INJECT_H
#define RLT_CLI_INJECT_H

#include <stddef.h>
#include <sys/types.h>

#include "inject_image.h" /* struct rlt_cli_inject_err */

struct rlt_cli_inject_opts {
	const unsigned char *blob; /* the blob's ELF bytes (ET_EXEC, x86-64, PT_LOADs in the window) */
	size_t blob_len;
	const void *config;        /* opaque bytes, copied after the header of the config block */
	size_t config_len;
	char *const *argv;         /* the command; argv[0] is looked up in PATH */
	/* After the first image's init: the first readback_len bytes of its config block (the
	 * header, then the opaque bytes as the blob left them), also when init failed. Optional. */
	void *readback;
	size_t readback_len;
	/* Later images that could not be injected (each then killed), a requester refused, and
	 * such: one line each, for the caller to print. Optional. */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

/* Runs opts->argv with the blob injected, serves later execs until the command has exited, and
 * puts in *status what the launcher exits with (its exit status, or 128 + the signal that
 * killed it). Returns 0, or -1 with *err set when the command could not be started injected:
 * the caller prints err->msg in one line and exits 125 (127 when err->code is -ENOENT or
 * -EACCES from the command's exec). Signals SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to the
 * launcher go to the command. */
int rlt_cli_inject_run(const struct rlt_cli_inject_opts *opts, int *status,
                       struct rlt_cli_inject_err *err);

#endif
