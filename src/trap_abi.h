/*
 * trap_abi.h: what the launcher and the handler inside the program agree on (rlthrottle(7),
 * "The system-call front"). The launcher fills one block, the injector copies it into the new
 * image, and the handler's init reads it once.
 */
#ifndef RLT_TRAP_ABI_H
#define RLT_TRAP_ABI_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/* The handler's code and data: one fixed window, allowed by the filter's first test. Far from
 * where the kernel puts a program (0x400000, 0x55..., 0x7f...) and Go's heap (0xc000000000). */
#define RLT_TRAP_BASE 0x5a5a00000000ull
#define RLT_TRAP_SPAN (64u << 20)

#define RLT_TRAP_MAGIC 0x726c7474u /* "rltt" */
#define RLT_TRAP_VERSION 2
#define RLT_TRAP_FILTER_MAX 512

/* The end of every filter of the front, where a call would trap: one made from the handler's
 * window passes, any other traps (7 instructions; instruction_pointer's high word is at
 * offset 12 of seccomp_data, its low word at 8). The base's low word and base + span must fit
 * in 32 bits, as RLT_TRAP_BASE does. */
#define RLT_TRAP_IP_TEST(base, span)                                                             \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 12),                                                  \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)((base) >> 32), 0, 4),                     \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 8),                                                   \
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)(base), 0, 2),                             \
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)(base) + (span), 1, 0),                    \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)

/* Sockets start here unless the fd limit is lower (then at half of it). */
#define RLT_TRAP_BAND 512
/* The handler's stacks, RLT_TRAP_STACK bytes each, are defined with their thread block in
 * preload/nolibc/nolibc.h. */

/* The front's part of the block the injector hands to the handler's init (the opaque bytes
 * after struct rlt_inject_hdr, inject_proto.h): what the handler cannot work out itself. */
/* The classes of data calls the filter traps. A program with no send rule (RLT_SEND, and the
 * connects a send can make: RLT_CONNECT, RLT_CONNS) has no reason to pay a signal per send;
 * one with no RLT_RECV rule none per receive. An image whose rules need a class the first
 * filter left out stacks a filter for it (preload/trap_band.c rlt_trap_watch_class). */
#define RLT_TRAP_SENDS 1u
#define RLT_TRAP_RECVS 2u

struct rlt__trap_cfg {
	uint32_t magic, version;
	int32_t band;         /* the filter's band: the handler places sockets from here */
	uint32_t nfilter;
	uint32_t covers;      /* RLT_TRAP_SENDS, RLT_TRAP_RECVS: the classes the filter traps */
	struct sock_filter filter[RLT_TRAP_FILTER_MAX];
	char msg[1024];       /* why the init failed (init returns a negative errno) */
};

#endif
