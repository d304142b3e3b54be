/*
 * trap_filter.h: the seccomp program of the in-process system-call front (rlthrottle(7),
 * "The system-call front"). Built here, where libseccomp is at hand, and installed by the
 * handler inside the program, which has no library to build it with.
 */
#ifndef RLT_CLI_TRAP_FILTER_H
#define RLT_CLI_TRAP_FILTER_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The handler's code lives in [base, base + span): its own system calls are allowed. */
struct rlt_cli_trap_spec {
	uint64_t base;
	uint32_t span;
	int band; /* sockets live at fds >= band: only those trap on read/write and friends */
	unsigned covers; /* RLT_TRAP_SENDS, RLT_TRAP_RECVS (trap_abi.h): the data calls trapped */
};

/* The program, at most max instructions, into prog; its length, or -1 with err set. */
int rlt_cli_trap_filter(const struct rlt_cli_trap_spec *spec, struct sock_filter *prog,
                        size_t max, struct rlt_error *err);

#endif
