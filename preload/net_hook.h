/*
 * net_hook.h: what the network conditions' files share: net_hook.c (the socket table, what a
 * condition does to a call, the installing), net_calls.c (the calls the conditions stand in
 * front of) and latency's (net_latency.c, net_line.c, net_delay.c); and what the waits ask of
 * them.
 */
#ifndef RLT_NET_HOOK_H
#define RLT_NET_HOOK_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "load.h"
#include "net.h"
#include "real.h"
#include "rule_set.h"
#include "rlthrottle.h"

enum { RLT_PRE_FD_UNKNOWN = 0, RLT_PRE_FD_OTHER, RLT_PRE_FD_SOCKET, RLT_PRE_FD_BUSY };

struct rlt_pre_net_fd {
	_Atomic uint8_t kind;  /* RLT_PRE_FD_*: written last when an entry is set up */
	uint64_t seed;         /* the seed its sequence started from */
	uint64_t key;          /* which socket of the process it is (its sequence's key) */
	_Atomic uint32_t line; /* its delay line under latency (net_line.c), 0: none */
	/* connect=timeout on a non-blocking connect: when the attempt, never made, fails with
	 * ETIMEDOUT (0: none); the waits hold the socket until then, and SO_ERROR tells it */
	_Atomic rlt_ns_t black_until;
	struct rlt__net_sock s;
};

extern struct rlt_pre_net_fd *rlt_pre_net_tab;
extern unsigned rlt_pre_net_tab_n;

/* 1 when a call on fd is surely not the conditions' (the common case under RLT_NET: a socket
 * none of them applies to): the socket's choice was made for the conditions in force, none
 * applies, it has no delay line nor black hole, and no set waits to be applied. Inline, a
 * few loads: the whole cost such a call pays (the bench's net part, row d). */
static inline int rlt_pre_net_untouched(int fd)
{
	const struct rlt_pre_net_fd *e;

	if ((unsigned)fd >= rlt_pre_net_tab_n)
		return 0;
	e = &rlt_pre_net_tab[fd];
	return atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_PRE_FD_SOCKET &&
	       e->s.gen == atomic_load_explicit(&rlt__net_gen, memory_order_relaxed) &&
	       !e->s.applies && (e->s.stream || e->s.peer.af) &&
	       !atomic_load_explicit(&e->line, memory_order_relaxed) &&
	       !atomic_load_explicit(&e->black_until, memory_order_relaxed) &&
	       !(rlt_pre_rules.pub && rlt__ctl_pending(&rlt_pre_rules));
}

/* The functions the conditions stand in front of; rlt_pre_true_NAME is the real one as resolved
 * before the swap (the types are real.h's RLT_REAL_SYMBOLS). */
#define NET_CALLS(X)                                                                             \
	X(socket) X(connect) X(accept) X(accept4) X(send) X(sendto) X(sendmsg) X(sendmmsg) \
	X(write) X(writev) X(pwritev2) X(sendfile) X(recv) X(recvfrom) X(recvmsg) X(recvmmsg) X(read) X(readv) X(preadv2) \
	X(close) X(dup2) X(dup3) X(getsockopt) X(splice)

#define NET_TRUE(name) extern name##_t rlt_pre_true_##name;
NET_CALLS(NET_TRUE)
#undef NET_TRUE

/* RLT_NET: the network conditions read and, when set, put in front of the real functions (at
 * load: load.c). -1 with err set on a bad value. */
int rlt_pre_net_load(struct rlt_error *err);

/* fd closed or replaced (not in a vfork's child). */
void rlt_pre_net_forget(int fd);
/* 1 when a hang holds e's stream's receives now (its delay line's due data is not reported). */
int rlt_pre_net_in_hung(struct rlt_pre_net_fd *e, rlt_ns_t now);
/* splice from `in`, a stream with a delay line: 1 with *ret when the line answered (what it
 * holds goes first, written to `out`); 0: the kernel's splice. */
int rlt_pre_net_splice_in(int in, int out, size_t len, unsigned flags, ssize_t *ret);
/* ioctl(FIONREAD) on fd: 1 with *n when its delay line answers (the bytes due now). */
int rlt_pre_net_inq(int fd, int *n);
/* newfd is now a copy of oldfd (dup, dup2, dup3, F_DUPFD): what is the socket's, not the
 * fd's, goes with it (a black hole's outcome, its delay line). */
void rlt_pre_net_dup(int oldfd, int newfd);
/* fd's entry as a socket opened now (or first seen now). */
void rlt_pre_net_open(struct rlt_pre_net_fd *e, int fd, int af, int stream,
                      const struct rlt__peer *peer);
/* Classifies fd (once): a socket gets its family, type and peer. NULL: not a socket of ours. */
struct rlt_pre_net_fd *rlt_pre_net_entry(int fd);
/* The conditions in force for e's socket (NULL: none apply). */
const struct rlt__net_set *rlt_pre_net_conditions(struct rlt_pre_net_fd *e);
int rlt_pre_net_nonblocking(int fd, int flags);

/* One real call moving bytes [off, off + len) of the caller's buffer. */
typedef ssize_t (*rlt_pre_net_op_fn)(void *ctx, int fd, size_t off, size_t len);

struct rlt_pre_net_into;
/* into: a receive's buffer (a stream under latency is served from its delay line), or NULL. */
ssize_t rlt_pre_net_io(int fd, unsigned dir, size_t len, int flags, const struct sockaddr *addr,
                       socklen_t addrlen, rlt_pre_net_op_fn op, void *ctx,
                       const struct rlt_pre_net_into *into);

/* What the waits (hook_poll.c, hook_epoll.c) ask of the conditions: whether any are installed;
 * whether fd is a stream a hang applies to; the events of `events` a hang holds back now (none
 * ever come while it lasts; *due lowered to when to look again for a set that released it, or
 * for its close=, which is made then). */
int rlt_pre_net_on(void);
int rlt_pre_net_may_hold(int fd);
unsigned rlt_pre_net_held(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due);

/* The true functions kept, ours put in the real ones' place (net_calls.c). */
void rlt_pre_net_swap(void);

#endif
