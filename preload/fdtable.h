/*
 * fdtable.h: what a hook knows of an fd (fdtable.c): the table indexed by fd, the gate a hook
 * asks first, and the connection blocks the fds of one socket share.
 */
#ifndef RLT_FDTABLE_H
#define RLT_FDTABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "load.h"
#include "policy.h"

enum rlt_pre_fdkind {
	RLT_FD_UNKNOWN = 0, /* never seen: classified on first use */
	RLT_FD_OTHER,       /* not a socket, or a socket no rule can ever apply to */
	RLT_FD_SOCKET,
};

/* What connects a socket's fds (dup shares it): connection-scope states and RLT_CONNS. */
struct rlt_pre_sock_budgets {
	_Atomic uint32_t refs;    /* fds that refer to this socket */
	uint32_t conns_mask;      /* RLT_CONNS rules this connection counts against */
	struct rlt__peer conns_peer; /* ... and the peer their keys were taken for (key=) */
	uint32_t fork_seen;       /* the fork that last counted it (rlt_pre_fdtable_conns_held) */
	_Atomic uint32_t next;    /* free list: index + 1 of the block below it, 0 for none */
	_Alignas(64) unsigned char states[]; /* rlt_pre_rules.conn_block_size bytes */
};

/* struct rlt_pre_fd's unheld */
#define RLT_PRE_UNHELD 1
#define RLT_PRE_UNHELD_ONESHOT 2

struct rlt_pre_fd {
	_Atomic uint8_t kind;     /* enum rlt_pre_fdkind, written last when an entry is set up */
	_Atomic uint8_t pass;     /* RLT_PASS bits: calls that surely go straight through (the gate) */
	uint8_t type;             /* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	uint8_t nonblock;         /* O_NONBLOCK is set on the file */
	uint8_t listening;        /* accept() was called on it */
	/* its readiness is one the waits cannot hold (hook_epoll.c: a one-shot epoll registration,
	 * RLT_PRE_UNHELD_ONESHOT, or one beyond the table, RLT_PRE_UNHELD): a non-blocking call
	 * on it waits for one piece at the least rather than fail with EAGAIN (src/pacing.c
	 * RLT_PACE_UNHELD). A one-shot registration is still reported of our own: a listener's
	 * queue of ours (hook_connect.c) works through it */
	_Atomic uint8_t unheld;
	int af;                   /* socket family */
	/* a non-blocking connect or accept the budget let go later (hook_connect.c): the
	 * waits hold the socket whole until then (0: none) */
	_Atomic rlt_ns_t until;
	/* an epoll registration of it may be kept (hook_epoll.c): its close forgets them */
	_Atomic uint8_t registered;
	struct rlt__peer peer;    /* connected peer, af 0 when none */
	uint16_t local_port;      /* for accept rules: the listening port */
	uint32_t mask[RLT_VAR_COUNT]; /* rules that apply to this socket's traffic */
	struct rlt_pre_sock_budgets *conn;   /* NULL until the socket needs one */
	uint32_t ofd;             /* shared by the fds dup made of one open file, 0: no dup */
};

/*
 * The gate: the first thing a send or receive hook does, inline, before it builds a frame, is
 * to ask whether the call is surely not ours (a file, a pipe, a socket no rule of the variable
 * can match, a variable with no rule at all); then it jumps to the real function. Everything
 * else (a never-seen fd, a socket a rule may match, a call before the rules are loaded, an fd
 * beyond the table) goes to the hook's out-of-line part, which decides as before. `size` is 0
 * until the rules are loaded (rlt_pre_gate_open), so that a hook called from another library's
 * constructor takes the slow part, which resolves the real symbols first.
 */
#define RLT_PASS(var) (1u << (var))
#define RLT_PASS_ALL ((1u << RLT_VAR_COUNT) - 1)
struct rlt_pre_gate {
	struct rlt_pre_fd *table; /* the fd table (fdtable.c) */
	_Atomic unsigned size;    /* its entries; 0 until the rules are loaded */
	unsigned idle;            /* RLT_PASS bits of the variables that have no rule */
};
extern struct rlt_pre_gate rlt_pre_gate;

/* 1 when every call of the variables in bits on fd goes straight to the real function. A
 * socket's pass bits are set from its masks (fdtable.c pass_bits), a file's all at once; a
 * never-seen fd has none, so its first call classifies it. Three loads of one cache line and
 * the entry's byte: no lock, no TLS, no system call. */
static inline int rlt_pre_passes(int fd, unsigned bits)
{
	unsigned n = atomic_load_explicit(&rlt_pre_gate.size, memory_order_acquire);
	return __builtin_expect((unsigned)fd < n, 1) &&
	       ((rlt_pre_gate.idle |
	         atomic_load_explicit(&rlt_pre_gate.table[fd].pass, memory_order_relaxed)) &
	        bits) == bits;
}

/* 1 when no variable in bits has a rule (and the rules are loaded). */
static inline int rlt_pre_idle(unsigned bits)
{
	return atomic_load_explicit(&rlt_pre_gate.size, memory_order_acquire) &&
	       (rlt_pre_gate.idle & bits) == bits;
}

/* Opens the gate once the rules are loaded (init.c). */
void rlt_pre_gate_open(void);

/* The entry for fd, classifying a never-seen fd first (one getsockopt, once); NULL for fds
 * beyond the table. */
struct rlt_pre_fd *rlt_pre_fd_get(int fd);
/* The entry for fd without classifying (NULL beyond the table). */
struct rlt_pre_fd *rlt_pre_fd_slot(int fd);
/* The fd of a table entry (rlt_pre_fd_slot's inverse). */
int rlt_pre_fd_of(const struct rlt_pre_fd *e);
/* A new socket of this family and type (socket(), accept(), socketpair()). */
void rlt_pre_fd_new_socket(int fd, int af, int type, int nonblock);
/* The socket is now connected to / accepted from peer: recompute which rules apply. */
void rlt_pre_fd_set_peer(int fd, const struct rlt__peer *peer);
/* fd was closed (or is about to be reused). */
void rlt_pre_fd_forget(int fd);
/* newfd now refers to the same open file as oldfd. */
void rlt_pre_fd_dup(int oldfd, int newfd);
/* 1 when a and b are one socket's fds (a == b, or a dup made of one for the other). */
int rlt_pre_fd_same_file(int a, int b);
/* O_NONBLOCK was set or cleared on e's open file: on every fd of it, as the kernel keeps the
 * flag in the open file, not the fd. */
void rlt_pre_fd_set_nonblock(struct rlt_pre_fd *e, int nonblock);
/* The highest fd whose entry was ever set (-1: none): entries above it are all never-seen. */
int rlt_pre_fd_top(void);
/* Connection block of an fd, created on demand (NULL when no rule needs one). */
struct rlt_pre_sock_budgets *rlt_pre_fd_budgets(struct rlt_pre_fd *e);
/* How many fds a table indexed by fd covers: RLIMIT_NOFILE's hard limit, at least 2^16 and at
 * most 2^20 (the fd table's, and RLT_NET's socket table's). */
unsigned rlt_pre_fd_slots(void);
void rlt_pre_fdtable_init(void);

/* The connection-scope states of a socket: NULL when no rule has connection scope, or when no
 * memory could be had (rlt__charge then leaves the connection-scope rules out). */
static inline void *rlt_pre_budget_states(struct rlt_pre_fd *e)
{
	struct rlt_pre_sock_budgets *c;
	if (!rlt_pre_rules.conn_block_size)
		return NULL;
	c = rlt_pre_fd_budgets(e);
	return c ? c->states : NULL;
}
/* The connection on fd holds slots of the RLT_CONNS rules in mask until its last fd closes. */
void rlt_pre_fd_conns_hold(int fd, struct rlt_pre_sock_budgets *c, uint32_t mask,
                           const struct rlt__peer *peer);
/* In a forked child: the connections it inherited, counted per RLT_CONNS rule (a socket with
 * several fds once). */
void rlt_pre_fdtable_conns_held(uint32_t held[RLT_MAX_RULES_PER_VAR]);

/* 1 when e's socket is held until a connect or accept is due, not yet come (the clock read
 * only then). */
static inline int rlt_pre_fd_due_later(struct rlt_pre_fd *e)
{
	rlt_ns_t u = atomic_load_explicit(&e->until, memory_order_acquire);
	return u && u > rlt__now();
}

#endif
