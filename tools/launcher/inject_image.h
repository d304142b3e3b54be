/* The injection of one image (inject_image.c): the handler's blob checked and parsed, then
 * mapped into an image stopped at its exec, its init run there, every register put back, and
 * the image detached. inject.c runs the command and calls this at each exec it is asked for.
 * Errors are values; nothing here prints. */
#ifndef RLT_CLI_INJECT_IMAGE_H
#define RLT_CLI_INJECT_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An error: code is a negative errno (or -1), msg one line without the program's name. */
struct rlt_cli_inject_err {
	int code;
	char msg[300];
};

/* Sets *err (msg from fmt, printf-style) and returns -1. */
int rlt_cli_inject_seterr(struct rlt_cli_inject_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* How many unrelated stops (signals for the program) one step of ours may meet. */
#define RLT_CLI_INJECT_MAX_STOPS 64
#define RLT_CLI_INJECT_MAX_SEGS 8

struct rlt_cli_inject_seg {
	uint64_t vaddr, memsz, off, filesz;
	int prot;
};

/* The blob as mapped: its PT_LOAD segments, sorted, all in the window of src/inject_proto.h. */
struct rlt_cli_inject_blob {
	const unsigned char *bytes;
	struct rlt_cli_inject_seg seg[RLT_CLI_INJECT_MAX_SEGS];
	int nseg;
	uint64_t entry;
	uint64_t lo, hi; /* the pages the segments span */
};

/* What every image of the command gets: the blob, the opaque config bytes that follow the
 * config block's header, and the name of the launcher's exec socket. */
struct rlt_cli_inject_payload {
	struct rlt_cli_inject_blob blob;
	const void *config;
	size_t config_len;
	char sockname[64];
};

/* Parses blob into *out, checking that it is an ELF the injector can map (rlt_cli_inject_run's
 * checks, inject.h). Returns 0 or -1 with *err set. */
int rlt_cli_inject_parse_blob(const unsigned char *blob, size_t len,
                              struct rlt_cli_inject_blob *out, struct rlt_cli_inject_err *err);

/* The same checks alone. Returns 0 or -1 with *err set. */
int rlt_cli_inject_check_blob(const unsigned char *blob, size_t len, struct rlt_cli_inject_err *err);

/* Injects p into the image pid, stopped at its exec (PTRACE_EVENT_EXEC), and detaches. flags go
 * into the config block; readback, if not NULL, gets its first readback_len bytes after the
 * init. Returns 0, or -1 with *err set: the image is then left stopped and attached (the caller
 * kills it). */
int rlt_cli_inject_image(const struct rlt_cli_inject_payload *p, pid_t pid, uint32_t flags,
                         void *readback, size_t readback_len, struct rlt_cli_inject_err *err);

#endif
