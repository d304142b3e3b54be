/*
 * trap_abi.h: what the launcher and the handler inside the program agree on (rlthrottle(7),
 * "The system-call front"). The launcher fills one block, the injector copies it into the new
 * image, and the handler's init reads it once.
 */
#ifndef RLT_TRAP_ABI_H
#define RLT_TRAP_ABI_H

#include <linux/filter.h>
#include <stdint.h>

/* The handler's code and data: one fixed window, allowed by the filter's first test. Far from
 * where the kernel puts a program (0x400000, 0x55..., 0x7f...) and Go's heap (0xc000000000). */
#define RLT_TRAP_BASE 0x5a5a00000000ull
#define RLT_TRAP_SPAN (64u << 20)

#define RLT_TRAP_MAGIC 0x726c7474u /* "rltt" */
#define RLT_TRAP_VERSION 1
#define RLT_TRAP_FILTER_MAX 512

/* Sockets start here unless the fd limit is lower (then at half of it). */
#define RLT_TRAP_BAND 512
/* The handler's stacks, RLT_TRAP_STACK bytes each, are defined with their thread block in
 * preload/nolibc/nolibc.h. */

/* The front's part of the block the injector hands to the handler's init (the opaque bytes
 * after struct rlt_inject_hdr, inject_proto.h): what the handler cannot work out itself. */
struct rlt__trap_cfg {
	uint32_t magic, version;
	int32_t band;         /* the filter's band: the handler places sockets from here */
	uint32_t nfilter;
	struct sock_filter filter[RLT_TRAP_FILTER_MAX];
	char msg[1024];       /* why the init failed (init returns a negative errno) */
};

#endif
