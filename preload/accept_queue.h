/*
 * accept_queue.h: the connections a non-blocking accept took from a listener that the rules
 * depending on the client (peer=, key=peer) did not allow yet (accept_queue.c). They wait
 * here, as in the kernel's backlog, and the listener is ready (hook_poll.c, hook_epoll.c) when
 * the first of them is due: the accept never sleeps and books nothing ahead.
 */
#ifndef RLT_ACCEPT_QUEUE_H
#define RLT_ACCEPT_QUEUE_H

#include <stdatomic.h>
#include <sys/socket.h>

#include "clock.h"
#include "policy.h"

/* How many connections wait here, over every listener: beyond, a listener is not accepted
 * from (EAGAIN, its readiness held) until one of them is handed over. */
#define RLT_PRE_ACCEPTQ_MAX 64

/* A connection waiting: its fd, its peer as accept() gives it, and what its rules key on. */
struct rlt_pre_queued {
	int fd;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct rlt__peer kp;
	uint32_t amask; /* the accept rules it meets */
	int nonblock;   /* O_NONBLOCK as the kernel set it at the accept */
	/* when its rules allow it, as last looked (a hint: asked again before it is taken, and
	 * for every connection after a set, rlt_pre_acceptq_timed) */
	rlt_ns_t due;
	uint64_t seq; /* its place in the queue: the first come goes first among the due */
};

/* How many wait now (one load: the waits and close look no further when 0). */
extern _Atomic int rlt_pre_acceptq_count;

/* When q's rules allow it under the rules in force (now when they do now). */
rlt_ns_t rlt_pre_acceptq_timed(const struct rlt_pre_queued *q, rlt_ns_t now);
/* Queues q under listener lfd: 0, or -1 when the queue is full. */
int rlt_pre_acceptq_put(int lfd, const struct rlt_pre_queued *q);
/* Takes the connection of lfd due first, if its rules allow it now, into *q: 1, or 0 (none). */
int rlt_pre_acceptq_take(int lfd, rlt_ns_t now, struct rlt_pre_queued *q);
/* When lfd's first connection is due (RLT_NS_NEVER: none waits). */
rlt_ns_t rlt_pre_acceptq_due(int lfd);
/* When the first connection of any listener is due (RLT_NS_NEVER: none waits). */
rlt_ns_t rlt_pre_acceptq_first_due(void);
/* fd is closed or replaced: as a listener, its connections are closed; as a waiting
 * connection (the program's dup2 over a number it did not know was taken), it is dropped. */
void rlt_pre_acceptq_forget(int fd);
/* Listener fd is closed while `to` still refers to its socket (a dup): the connections of fd
 * are to's now, as the kernel's backlog is the socket's, not the fd's. */
void rlt_pre_acceptq_moved(int fd, int to);
/* In a fork's child: the connections are the parent's to hand over; the child's copies close. */
void rlt_pre_acceptq_forked(void);

#endif
