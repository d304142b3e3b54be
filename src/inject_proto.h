/* What the launcher's injector (tools/launcher/inject.c) and the handler's blob agree on (issue 21,
 * item 3): where the blob lives, the block the injector hands to the blob's init, and the
 * messages of the later-exec protocol. Types only: no code, no libc, so that a freestanding
 * blob can include it as well as the launcher. */
#ifndef RLT_INJECT_PROTO_H
#define RLT_INJECT_PROTO_H

#include <stdint.h>

/* The blob's window: every PT_LOAD of the blob lies in [BASE, BASE + SIZE). The filter allows
 * the calls made from there (an instruction-pointer test), so the handler's own calls pass. The
 * window's start has 0x5a5a in its upper 32 bits and 0 below 26 bits, so the cBPF test is one
 * compare of the high word and one of the low word. */
#define RLT_INJECT_BASE 0x5a5a00000000ULL
#define RLT_INJECT_SIZE (64ULL << 20)

#define RLT_INJECT_MAGIC 0x31544c52u /* "RLT1" */

/* hdr.flags: this image is the command's first: the filter is not installed yet. After an
 * exec the filter is inherited and the blob must not stack a second one. */
#define RLT_INJECT_FIRST 1u

/* The config block as the blob's init sees it (its address is the init's one argument): this
 * header, then the caller's opaque bytes at opaque_off. The block stays mapped (read-write) for
 * the life of the image; the blob may write into it (a message for the launcher to read back
 * after init, at an offset of the blob's own choosing). */
struct rlt_inject_hdr {
	uint32_t magic;        /* RLT_INJECT_MAGIC */
	uint32_t size;         /* the whole block: header and opaque bytes */
	uint32_t opaque_off;   /* where the caller's bytes start */
	uint32_t opaque_len;   /* how many there are */
	uint32_t flags;        /* RLT_INJECT_FIRST or 0 */
	int32_t launcher_pid;  /* the launcher, for PR_SET_PTRACER before an exec */
	char sockname[64];     /* the launcher's abstract unix socket, without the leading NUL */
};

/* The later-exec protocol, on a SOCK_SEQPACKET connection to the abstract name sockname:
 *   requester -> launcher  {ATTACH, tid}       attach to my thread tid before it execs
 *   launcher -> requester  {REPLY, status}     0: attached (the exec will be injected), or -errno
 *   requester -> launcher  {EXEC_FAILED, tid, status}   only if the exec returned (-errno):
 *                                              the launcher detaches the thread,
 *   launcher -> requester  {REPLY, 0}          then says so (until then the thread is traced)
 * A successful exec closes the requester's end (it is close-on-exec) and stops at the
 * launcher, which injects the new image and detaches. */
#define RLT_INJECT_ATTACH 1u
#define RLT_INJECT_REPLY 2u
#define RLT_INJECT_EXEC_FAILED 3u

struct rlt_inject_msg {
	uint32_t magic; /* RLT_INJECT_MAGIC */
	uint32_t op;    /* RLT_INJECT_ATTACH, _REPLY or _EXEC_FAILED */
	int32_t tid;    /* the thread that will exec */
	int32_t status; /* REPLY and EXEC_FAILED: 0 or -errno */
};

/* The socket's name: RLT_INJECT_SOCK_PREFIX "<launcher pid>-<16 hex digits of nonce>". */
#define RLT_INJECT_SOCK_PREFIX "rlthrottle-inject-"

#endif
