/*
 * hook_connect.h: what the socket, connect and accept hooks (hook_connect.c) give the send
 * hooks (hook_send.c): the bookkeeping of a connection attempt, which a send that connects
 * (TCP Fast Open) makes as connect() does.
 */
#ifndef RLT_HOOK_CONNECT_H
#define RLT_HOOK_CONNECT_H

#include <stdint.h>
#include <sys/socket.h>

#include "charge.h"
#include "fdtable.h"
#include "policy.h"

/* A connection attempt's bookkeeping (hook_connect.c), shared by connect() and a send that
 * connects (TCP Fast Open): _begin sets the socket's peer, charges RLT_CONNECT and takes the
 * RLT_CONNS slots (0, or -1 with errno set: refused, nothing held); _end, after the real call
 * (rc 0 or -1, err its errno), settles and keeps or gives back the slots by the outcome, and
 * leaves errno err. */
struct rlt_pre_attempt {
	struct rlt__ticket t;
	struct rlt__peer peer;
	uint32_t nmask;
	int charged;
};
int rlt_pre_attempt_begin(int fd, struct rlt_pre_fd *e, const struct rlt__peer *peer,
                          struct rlt_pre_attempt *a);
void rlt_pre_attempt_end(int fd, struct rlt_pre_fd *e, struct rlt_pre_attempt *a, int rc,
                         int err);
/* The entry of a stream socket a send with these flags and address connects (TCP Fast Open:
 * rlt__connect_by_send), or NULL. */
struct rlt_pre_fd *rlt_pre_fastopen_socket(int fd, int flags, const struct sockaddr *to,
                                           socklen_t tolen);

#endif
