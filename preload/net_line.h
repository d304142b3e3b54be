/*
 * net_line.h: a stream's delay line under RLT_NET's latency (net_line.c): a buffer of ours that
 * takes the socket's data from the kernel as it comes, so that the sender's window stays open
 * while the data waits out its delay; each piece keeps its due time. The table of lines, one
 * per socket, shared by its dups. What is handed to the program when, and what the waits
 * report, is net_delay.c's.
 */
#ifndef RLT_NET_LINE_H
#define RLT_NET_LINE_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "clock.h"
#include "engine_lock.h"

struct rlt_pre_net_fd;
struct rlt__net_cond;

/* What a delay line holds at most per socket (rlthrottle(7) NETWORK CONDITIONS): past it, the
 * kernel's buffer and TCP's flow control hold the rest. */
#define RLT_PRE_DELAY_BYTES (8u << 20)

/* A line: used under its lock (rlt_pre_line_lock), by a caller holding a reference. */
struct rlt_pre_line {
	_Atomic uint32_t refs;  /* fds of the process referring to it, + calls using it now */
	_Atomic uint32_t state; /* 0 free, 1 being made or freed, 2 in use */
	_Atomic uint16_t gen;   /* bumped at each making: an fd's stale id finds it changed */
	uint64_t ino;           /* the socket: dup'd fds share the line */
	struct rlt__lock lock;
	unsigned char *mem;     /* RLT_PRE_DELAY_BYTES of data, then the chunks (net_line.c) */
	/* positions since the line was last empty: [rd, wr) held, the ring at pos % BYTES */
	uint64_t rd, wr;
	unsigned first, count;  /* the chunks held, a ring */
	int end;                /* the stream's end taken from the kernel: 0 none, -1 EOF, errno */
	rlt_ns_t end_due;
	rlt_ns_t floor;         /* the last due time given: jitter never reorders a stream */
	uint64_t told;          /* edge-triggered waits: the due position last reported */
	int told_end;
	int unconnected;        /* the kernel said ENOTCONN: nothing to take (yet) */
	/* the waits cannot answer for it (a one-shot epoll registration, one beyond their
	 * table: fdtable.h `unheld`): nothing more is taken, the kernel keeps the rest and
	 * reports it */
	int no_take;
};

/* The table. 0 with l's lock held; -1: not now (a signal handler of the thread holding it). */
int rlt_pre_line_lock(struct rlt_pre_line *l);
/* Gives back a reference; the last frees the line. */
void rlt_pre_line_put(struct rlt_pre_line *l);
/* A reference to the line of id (an fd's), or NULL if it changed since. */
struct rlt_pre_line *rlt_pre_line_ref(uint32_t id);
/* The line of e's socket (fd), with a reference for the caller: the one its fd has, one of
 * another fd of the same socket, or a new one when `make`. NULL: none. */
struct rlt_pre_line *rlt_pre_line_get(int fd, struct rlt_pre_net_fd *e, int make);
/* The waits cannot hold fd's readiness (fdtable.h): its readiness must stay the kernel's. */
int rlt_pre_line_unheld(int fd);
/* to (a dup of from's fd) refers to from's line too. */
void rlt_pre_line_share(struct rlt_pre_net_fd *from, struct rlt_pre_net_fd *to);
/* fd's entry no longer refers to its line (a close, a reuse): the last fd frees it. */
void rlt_pre_line_drop(struct rlt_pre_net_fd *e);

/* Taking from the kernel (the lock held). The bytes the line may still take (0: none). */
uint64_t rlt_pre_line_room(const struct rlt_pre_line *l);
/* Takes what the kernel holds on fd, as far as the line has room, each piece due after c. */
void rlt_pre_line_take(int fd, struct rlt_pre_line *l, struct rlt_pre_net_fd *e,
                       const struct rlt__net_cond *c);

/* Handing on (the lock held). The position up to which the line's data is due at now. */
uint64_t rlt_pre_line_due_end(struct rlt_pre_line *l, rlt_ns_t now);
/* When the line's next thing not due at now is (its head chunk beyond due, or its end);
 * RLT_NS_NEVER: nothing waits. */
rlt_ns_t rlt_pre_line_next_due(struct rlt_pre_line *l, rlt_ns_t now);
/* The end is due and nothing is ahead of it. */
int rlt_pre_line_end_due(struct rlt_pre_line *l, rlt_ns_t now);
/* Takes n bytes off the head of the line. */
void rlt_pre_line_consume(struct rlt_pre_line *l, uint64_t n);
/* Hands up to want due bytes into iov (cnt of them) from offset off; takes them off the line
 * unless peek. The count. */
size_t rlt_pre_line_give(struct rlt_pre_line *l, rlt_ns_t now, const struct iovec *iov, int cnt,
                         size_t off, size_t want, int peek);

#endif
