/*
 * hook_connect.h: what the socket, connect and accept hooks (hook_connect.c) give the send
 * hooks (hook_send.c): the bookkeeping of a connection attempt, which a send that connects
 * (TCP Fast Open) makes as connect() does; and to the waits (hook_poll.c), when a listener
 * may hand over a connection.
 */
#ifndef RLT_HOOK_CONNECT_H
#define RLT_HOOK_CONNECT_H

#include <stdint.h>
#include <sys/socket.h>

#include "charge.h"
#include "fdtable.h"
#include "policy.h"

/* A connection attempt's bookkeeping (hook_connect.c), shared by connect() and a send that
 * connects (TCP Fast Open): _begin sets the socket's peer, charges RLT_CONNECT (waiting for it,
 * unless nonblock: then a charge due later holds the socket whole until then) and takes the
 * RLT_CONNS slots (0, or -1 with errno set: refused, nothing held); _end, after the real call
 * (rc 0 or -1, err its errno), settles, keeps or gives back the slots by the outcome, and
 * leaves errno err. */
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
/* When listener l may take a connection from the kernel: the time from which the accept rules
 * every connection of it meets allow one (now when none is short) and, when the queue of
 * connections waiting for the client-dependent rules is full, one of them is handed over. */
rlt_ns_t rlt_pre_listener_due(struct rlt_pre_fd *l, rlt_ns_t now);
/* 1 when listener lfd (entry l) hands over a queued connection now (accept_queue.h): the
 * waits report it ready, whatever the kernel says. Else 0, *due lowered to when it will. */
int rlt_pre_listener_queued(int lfd, struct rlt_pre_fd *l, rlt_ns_t now, rlt_ns_t *due);

#endif
