/*
 * hook_send.h: the send hooks (hook_send.c): a send that connects (TCP Fast Open), made by
 * send, sendto and sendmsg alike.
 */
#ifndef RLT_HOOK_SEND_H
#define RLT_HOOK_SEND_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fdtable.h"
#include "io_pacing.h"

/* A send that connects (TCP Fast Open, rlt_pre_fastopen_socket): charged as a connect, then
 * sent (paced as any send to that peer). */
ssize_t rlt_pre_fastopen_send(int fd, struct rlt_pre_fd *e, const struct sockaddr *to,
                              socklen_t tolen, size_t total, int flags, rlt_pre_piece_fn fn,
                              void *ctx);

#endif
