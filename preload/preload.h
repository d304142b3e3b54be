/*
 * preload.h: what the hooks share: the real functions, the fd table, the loaded rules.
 * Only symbols marked RLT_EXPORT (the hooks) leave librlthrottle.so.
 */
#ifndef RLT_PRELOAD_H
#define RLT_PRELOAD_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "charge.h"
#include "policy.h"
#include "redis_client.h"
#include "settings.h"

#ifdef RLT_NOLIBC /* the freestanding blob exports nothing: its caller jumps to fixed addresses */
#define RLT_EXPORT
#else
#define RLT_EXPORT __attribute__((visibility("default")))
#endif
/* The part of a hook past its gate (rlt_pre_passes): kept out of the hook, so that the hook's
 * way to the real function builds no frame and saves no register. */
#define RLT_SLOW __attribute__((noinline))

/* The real functions, resolved once at load with dlsym(RTLD_NEXT) (real.c), or raw system calls
 * in the freestanding build (real_sys.c), which has no stdio and so no fclose. */
#ifdef RLT_NOLIBC
#define RLT_REAL_FCLOSE(X)
#define RLT_REAL_LIBC_ONLY(X)
#else
#define RLT_REAL_FCLOSE(X) X(int, fclose, (FILE *))
/* what only a C library has: the exec family (the system-call front traps execve itself) and
 * stdio (hook_exec.c, hook_stdio.c) */
#define RLT_REAL_LIBC_ONLY(X)                                                                    \
	X(int, execve, (const char *, char *const[], char *const[]))                             \
	X(int, execv, (const char *, char *const[]))                                             \
	X(int, execvp, (const char *, char *const[]))                                            \
	X(int, execvpe, (const char *, char *const[], char *const[]))                            \
	X(int, fexecve, (int, char *const[], char *const[]))                                     \
	X(int, execveat, (int, const char *, char *const[], char *const[], int))                 \
	X(FILE *, fdopen, (int, const char *))                                                   \
	X(int, vdprintf, (int, const char *, va_list))
#endif
#define RLT_REAL_SYMBOLS(X)                                                                      \
	X(int, socket, (int, int, int))                                                          \
	X(int, socketpair, (int, int, int, int[2]))                                             \
	X(int, connect, (int, const struct sockaddr *, socklen_t))                               \
	X(int, accept, (int, struct sockaddr *, socklen_t *))                                    \
	X(int, accept4, (int, struct sockaddr *, socklen_t *, int))                              \
	X(ssize_t, send, (int, const void *, size_t, int))                                       \
	X(ssize_t, sendto, (int, const void *, size_t, int, const struct sockaddr *, socklen_t)) \
	X(ssize_t, sendmsg, (int, const struct msghdr *, int))                                   \
	X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int))                             \
	X(ssize_t, write, (int, const void *, size_t))                                           \
	X(ssize_t, writev, (int, const struct iovec *, int))                                     \
	X(ssize_t, sendfile, (int, int, off_t *, size_t))                                        \
	X(ssize_t, sendfile64, (int, int, off64_t *, size_t))                                    \
	X(ssize_t, splice, (int, loff_t *, int, loff_t *, size_t, unsigned))                       \
	X(ssize_t, recv, (int, void *, size_t, int))                                             \
	X(ssize_t, recvfrom, (int, void *, size_t, int, struct sockaddr *, socklen_t *))         \
	X(ssize_t, recvmsg, (int, struct msghdr *, int))                                         \
	X(int, recvmmsg, (int, struct mmsghdr *, unsigned int, int, struct timespec *))          \
	X(ssize_t, read, (int, void *, size_t))                                                  \
	X(ssize_t, readv, (int, const struct iovec *, int))                                      \
	X(ssize_t, preadv2, (int, const struct iovec *, int, off_t, int))                        \
	X(ssize_t, pwritev2, (int, const struct iovec *, int, off_t, int))                       \
	X(int, close, (int))                                                                     \
	X(int, close_range, (unsigned int, unsigned int, int))                                   \
	X(void, closefrom, (int))                                                                \
	RLT_REAL_FCLOSE(X)                                                                       \
	X(int, dup, (int))                                                                       \
	X(int, dup2, (int, int))                                                                 \
	X(int, dup3, (int, int, int))                                                            \
	X(int, fcntl, (int, int, ...))                                                           \
	X(int, fcntl64, (int, int, ...))                                                         \
	X(int, ioctl, (int, unsigned long, ...))                                                 \
	X(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))    \
	X(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *,            \
	                 const sigset_t *))                                                      \
	X(int, epoll_ctl, (int, int, int, struct epoll_event *))                                \
	X(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *))            \
	X(int, epoll_pwait2, (int, struct epoll_event *, int, const struct timespec *,          \
	                      const sigset_t *))                                                 \
	X(void, _exit, (int))                                                                    \
	X(void, _Exit, (int))                                                                    \
	RLT_REAL_LIBC_ONLY(X)

#define RLT_DECLARE_REAL(ret, name, args)                                                        \
	typedef ret(*name##_t) args;                                                             \
	extern name##_t real_##name;
RLT_REAL_SYMBOLS(RLT_DECLARE_REAL)
#undef RLT_DECLARE_REAL

/* Resolves every real symbol; the first hook or the constructor calls it. */
void rlt_pre_real_init(void);

/* ----- load-time state (init.c) ----- */

extern struct rlt__ruleset rlt_pre_rules;
/* 1 once the rules are loaded and hooks may throttle; before that hooks pass straight through. */
extern _Atomic int rlt_pre_active;
/* Which variables have any rule at all (bit per enum rlt_var): a hook for a variable with no
 * rule costs one load. */
extern unsigned rlt_pre_vars_in_use;

extern int rlt_pre_loglevel;
void rlt_pre_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the rules and what goes with them (load.c), for both ways in; the process is not
 * throttled until rlt_pre_go. -1 with err set on a bad variable. */
int rlt_pre_load(const struct rlt__settings *set, struct rlt_error *err);
void rlt_pre_go(void);
/* RLT_NET (net_hook.c): the network conditions read and, when set, put in front of the real
 * functions. -1 with err set on a bad value. */
int rlt_pre_net_load(struct rlt_error *err);
/* stderr through the real write, never through a hook or stdio's buffer. */
void rlt_pre_say(const char *s, size_t n);
/* The RLT_STATS summary, once per process (rlthrottle(7) STATISTICS); whether one is wanted, whether we
 * publish a page. */
void rlt_pre_write_stats(void);
int rlt_pre_summary_wanted(void);
int rlt_pre_publishing(void);
/* In a forked child, before anything else of ours runs: our state becomes the child's own. */
void rlt_pre_forked(void);

/* 1 when the caller runs in our memory without being the process our state describes: the
 * child of vfork() or posix_spawn() (CPython's subprocess), before it execs. Its fd table is
 * its own, so what it closes or duplicates says nothing about ours, and it must change none
 * of our state. TLS cannot tell it from the parent's thread (they share it); its pid can.
 * A system call (two in such a child): only for the calls that change the fd table, never on
 * a hot path. */
int rlt_pre_borrowed(void);
/* Removes this process's published page (rlthrottle(1) COMMANDS), if the page is this process's own: a vfork
 * child and the child of a fork that ran no handlers share or copy their parent's. At exit, at
 * a fatal signal, and in the _exit hook (hook_exit.c). */
void rlt_pre_unpublish(void);
/* An exec (hook_exec.c): the page is this image's, so its name goes before the new image runs
 * (a throttled one makes its own; a program not throttled, by RLT_INHERIT=0, its own
 * environment, or a static or setuid binary, is then not listed as throttled, nor is a `set`
 * left pending for it). _begin returns 1 when it removed the name; _failed(1) puts it back
 * (the exec failed: this image goes on). */
int rlt_pre_exec_begin(void);
/* stdin, stdout and stderr that are sockets a rule may pace become streams whose moves go
 * through read and write (hook_stdio.c); at load. */
void rlt_pre_stdio_init(void);
void rlt_pre_exec_failed(int hid);

/* Called at the top of every hook: makes sure the real symbols exist (a hook may run before our
 * constructor, from another library's constructor). */
static inline void rlt_pre_ensure_real(void)
{
	extern _Atomic int rlt_pre_real_ready;
	if (__builtin_expect(!atomic_load_explicit(&rlt_pre_real_ready, memory_order_acquire), 0))
		rlt_pre_real_init();
}

/* ----- the fd table (fdtable.c) ----- */

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

struct rlt_pre_fd {
	_Atomic uint8_t kind;     /* enum rlt_pre_fdkind, written last when an entry is set up */
	_Atomic uint8_t pass;     /* RLT_PASS bits: calls that surely go straight through (the gate) */
	uint8_t type;             /* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	uint8_t nonblock;         /* O_NONBLOCK is set on the file */
	uint8_t listening;        /* accept() was called on it */
	/* its readiness is one the waits cannot hold (hook_poll.c: a one-shot epoll registration,
	 * one beyond the table): a non-blocking call on it waits for one piece at the least
	 * rather than fail with EAGAIN (src/pacing.c RLT_PACE_UNHELD) */
	_Atomic uint8_t unheld;
	int af;                   /* socket family */
	/* a non-blocking connect or accept the budget let go later (hook_connect.c): the
	 * waits hold the socket's readiness until then (0: none) */
	_Atomic rlt_ns_t until;
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
/* O_NONBLOCK was set or cleared on e's open file: on every fd of it, as the kernel keeps the
 * flag in the open file, not the fd. */
void rlt_pre_fd_set_nonblock(struct rlt_pre_fd *e, int nonblock);
/* The highest fd whose entry was ever set (-1: none): entries above it are all never-seen. */
int rlt_pre_fd_top(void);
/* Connection block of an fd, created on demand (NULL when no rule needs one). */
struct rlt_pre_sock_budgets *rlt_pre_fd_budgets(struct rlt_pre_fd *e);
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

/* ----- what every hook shares ----- */

/* errno := e, return -1: the one place a hook turns an error value into errno. */
static inline int rlt_pre_fail(int e)
{
	errno = e;
	return -1;
}

/* ----- what the send and receive hooks share (io_pacing.c) ----- */

/* The fd's entry when a rule of var may apply to it; NULL sends the call straight through
 * (a file, a pipe, a socket no rule matches, or no rule at all for var: one load each).
 * Inline: it is the whole cost of a call that is not ours. Not NULL only once the rules are
 * loaded (rlt_pre_active), and so the real symbols resolved (init.c resolves them first). */
static inline struct rlt_pre_fd *rlt_pre_socket_for(int fd, enum rlt_var var)
{
	struct rlt_pre_fd *e;
	unsigned n;

	if (!(rlt_pre_vars_in_use & (1u << var)) ||
	    !atomic_load_explicit(&rlt_pre_active, memory_order_acquire) || rlt__internal)
		return NULL;
	/* the gate's copy of the table, on the line the gate has just read */
	n = atomic_load_explicit(&rlt_pre_gate.size, memory_order_acquire);
	e = (unsigned)fd < n ? &rlt_pre_gate.table[fd] : NULL;
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_UNKNOWN)
		e = rlt_pre_fd_get(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET)
		return NULL;
	return e;
}

static inline int rlt_pre_is_dgram(const struct rlt_pre_fd *e)
{
	return e->type != SOCK_STREAM;
}

/* The rules for a datagram sent to (or received from) an explicit address on an unconnected
 * socket. *to: that address as a peer (af 0: none, or the socket is connected), for
 * rlt_pre_key_peer. */
uint32_t rlt_pre_mask_to(struct rlt_pre_fd *e, enum rlt_var var, const struct sockaddr *sa,
                         socklen_t len, struct rlt__peer *to);

/* What a keyed rule keys a send or receive on (rlthrottle(7) RULES `key`): the socket's peer when it is
 * connected, else the datagram's address (`to`, from rlt_pre_mask_to; af 0: "(no address)"). */
static inline const struct rlt__peer *rlt_pre_key_peer(const struct rlt_pre_fd *e,
                                                       const struct rlt__peer *to)
{
	return e->peer.af ? &e->peer : to;
}

#define RLT_IOV_PIECE_MAX 1024 /* IOV_MAX on Linux */

/* The part [off, off + len) of iov, in at most RLT_IOV_PIECE_MAX entries; the entries used. */
int rlt_pre_iov_slice(const struct iovec *iov, int cnt, size_t off, size_t len,
                      struct iovec out[RLT_IOV_PIECE_MAX]);
/* The bytes of iov (SSIZE_MAX at most). */
size_t rlt_pre_iov_total(const struct iovec *iov, int cnt);

/* One real call moving bytes [off, off + len) of the message on the socket `fd` (the call's
 * own, or the duplicate a paced call holds: rlt_pre_stream_io). */
typedef ssize_t (*rlt_pre_piece_fn)(void *ctx, int fd, size_t off, size_t len);

/* The context of a piece of sendmsg/writev or recvmsg/readv (hook_send.c, hook_recv.c). */
struct rlt_pre_msg_ctx {
	int fd;
	const struct msghdr *msg;
	int flags;
	int use_writev; /* writev/readv rather than sendmsg/recvmsg */
};

/* A stream send or receive of total bytes, piece by piece, each when the budget allows.
 * keep_whole: a send made by send, sendto, write, sendmsg or writev, which goes out in one
 * real call when it is small enough (rlt__whole); sendfile and splice move in pieces.
 * RLT_PRE_UNSPLIT: one real call whatever its size (a send whose flags the kernel reads per
 * call, MSG_ZEROCOPY: RLT_PACE_UNSPLIT). */
#define RLT_PRE_UNSPLIT 2
/* The send flags under which a call is made whole (RLT_PRE_UNSPLIT). */
#define RLT_PRE_UNSPLIT_FLAGS MSG_ZEROCOPY
ssize_t rlt_pre_stream_io(int fd, struct rlt_pre_fd *e, enum rlt_var var, uint32_t mask,
                          size_t total, int nonblock, int waitall, int keep_whole,
                          rlt_pre_piece_fn fn, void *ctx);

/*
 * The short way of send, sendto and write (hook_send.c), for a send made as one real call
 * charged whole before it: a stream send that goes whole (rlt__pace_whole), or a datagram on a
 * connected socket (or sent with no address). rlt_pre_send_charge charges it, without a wait:
 * RLT_PRE_SENT_DONE (it goes at once: make the real call; if it moves all of len, there is
 * nothing left to do: its charge counted it), RLT_PRE_SETTLE (make it, then rlt_pre_sent_rest),
 * RLT_PRE_SEND_WAIT (it must wait: rlt_pre_send_waited makes it), 0 (not such a send: take the
 * long way), -1 (rejected: errno set). The hook makes the real call of a conforming send itself,
 * so that after the system call, which leaves the return predictions of a deep call chain
 * behind it, only the C library's return and the hook's own are left to make; and it keeps
 * what it needs then in registers, not in the ticket, whose lines the kernel's work evicts.
 */
#define RLT_PRE_SETTLE 1
#define RLT_PRE_SENT_DONE 2
#define RLT_PRE_SEND_WAIT 3
int rlt_pre_send_charge(struct rlt_pre_fd *e, size_t len, int nonblock, struct rlt__ticket *t);
/* What the real call left to settle: a short send or an error gives back what it did not
 * move, as the pacing loop does. Keeps errno; returns n. */
ssize_t rlt_pre_sent_rest(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                          ssize_t n);
/* A send charged by rlt_pre_send_charge that must wait (RLT_PRE_SEND_WAIT): waits for its slot
 * holding a duplicate of a stream socket (as rlt_pre_stream_io's wait, issue 17), then makes it
 * (fn, as rlt_pre_stream_io's) and settles it. */
ssize_t rlt_pre_send_waited(int fd, struct rlt_pre_fd *e, struct rlt__ticket *t, int nonblock,
                            rlt_pre_piece_fn fn, void *ctx);

/* A connection attempt's bookkeeping (hook_connect.c), shared by connect() and a send that
 * connects (TCP Fast Open): _begin sets the socket's peer, charges RLT_CONNECT (waiting for it,
 * unless nonblock) and takes the RLT_CONNS slots (0, or -1 with errno set: refused, nothing
 * held); _end, after the real call (rc 0 or -1, err its errno), settles, keeps or gives back
 * the slots by the outcome, holds a non-blocking attempt's socket until its charge is due,
 * and leaves errno err. */
struct rlt_pre_attempt {
	struct rlt__ticket t;
	struct rlt__peer peer;
	uint32_t nmask;
	int charged;
	rlt_ns_t until;           /* a non-blocking attempt's go time, 0 when it went at once */
};
int rlt_pre_attempt_begin(int fd, struct rlt_pre_fd *e, const struct rlt__peer *peer,
                          int nonblock, struct rlt_pre_attempt *a);
void rlt_pre_attempt_end(int fd, struct rlt_pre_fd *e, struct rlt_pre_attempt *a, int rc,
                         int err);
/* The entry of a stream socket a send with these flags and address connects (TCP Fast Open:
 * rlt__connect_by_send), or NULL. */
struct rlt_pre_fd *rlt_pre_fastopen_socket(int fd, int flags, const struct sockaddr *to,
                                           socklen_t tolen);
/* Such a send: charged as a connect, then sent (paced as any send to that peer). */
ssize_t rlt_pre_fastopen_send(int fd, struct rlt_pre_fd *e, const struct sockaddr *to,
                              socklen_t tolen, size_t total, int flags, rlt_pre_piece_fn fn,
                              void *ctx);

/* Before a non-blocking datagram receive (`nonblock`): 1 with errno EAGAIN when its budget
 * does not allow one now (the waits hold the socket until it does), nothing received. */
int rlt_pre_dgram_refused(struct rlt_pre_fd *e, int nonblock);
/* After a datagram arrived (n, or -1) from `peer` (rlt_pre_key_peer): charge it whole and
 * hold it until its slot; a non-blocking one is charged and not held (the waits hold the
 * socket until the budget has paid for it). */
ssize_t rlt_pre_dgram_received(struct rlt_pre_fd *e, uint32_t mask, const struct rlt__peer *peer,
                               ssize_t n, uint64_t bytes, uint64_t msgs, int nonblock);

/* ----- the waits (hook_poll.c) ----- */

/* The events of `events` (POLLIN, POLLRDNORM; POLLOUT, POLLWRNORM) on fd that a wait holds back at `now` because the
 * budget does not allow the call they announce yet (src/ready.h); *due is lowered to when the
 * earliest of them is due. 0 for anything not a throttled socket. The one place a wait asks
 * "not ready before T": what else holds a socket back (network conditions) goes here. */
unsigned rlt_pre_fd_held(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due);
/* Or'ed into rlt_pre_fd_held's answer when the socket is held whole (a connect or accept due
 * later): its errors and hang-ups too, which the kernel reports whatever the events asked, so
 * that a refused attempt is not reported before its charge is due either. */
#define RLT_PRE_HELD_WHOLE 0x40000000u
/* Takes fd's epoll registrations out whole now (a connect or accept due later), before a
 * thread already asleep in their wait can be told of the socket. */
void rlt_pre_fd_hold_whole(int fd);
/* fd is closed: the epoll registrations kept for it go (the kernel's went with the file). */
void rlt_pre_fd_regs_closed(int fd);
/* A non-blocking call on fd was refused for its budget (EAGAIN; var: RLT_VAR_SEND, or
 * RLT_VAR_RECV or RLT_VAR_ACCEPT for its readable side): its epoll registrations are held now, so that the wait that finds it due
 * puts the event back, which gives an edge-triggered registration its edge. */
void rlt_pre_fd_refused(int fd, enum rlt_var var);
/* 1 when a wait may hold fd back now (a send or receive rule applies to it, a connect or
 * accept let it go later, or it listens under an accept rule): under the system-call front
 * the waits trap from the first such socket on. */
int rlt_pre_fd_holdable(int fd);
/* When listener l may hand over a connection: the time from which the accept rules every
 * connection of it meets allow one (now when none is short; hook_connect.c). */
rlt_ns_t rlt_pre_listener_due(struct rlt_pre_fd *l, rlt_ns_t now);
/* The waits with the C library's convention (-1 and errno), for both fronts. */
int rlt_pre_poll(struct pollfd *fds, nfds_t n, int ms);
int rlt_pre_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *sig);
int rlt_pre_select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv);
int rlt_pre_pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *tmo,
                    const sigset_t *sig);
int rlt_pre_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int rlt_pre_epoll_pwait(int epfd, struct epoll_event *evs, int max, int ms, const sigset_t *sig);
int rlt_pre_epoll_pwait2(int epfd, struct epoll_event *evs, int max, const struct timespec *tmo,
                         const sigset_t *sig);

#endif
