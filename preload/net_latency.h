/*
 * net_latency.h: latency (RLT_NET) as the kernel's queue sees it (net_latency.c). A delay counts
 * from when the data reached the host, not from when the program asks for it: so the socket's
 * receives are stamped by the kernel, and the data at the head of its queue is due at its
 * arrival plus the delay drawn for it, one draw per arrival, so that a receive and a wait
 * looking at the same head agree. A stream's data then waits in its delay line (net_line.h).
 */
#ifndef RLT_NET_LATENCY_H
#define RLT_NET_LATENCY_H

#include <sys/socket.h>
#include <sys/types.h>

#include "clock.h"

struct rlt_pre_net_fd;
struct rlt__net_cond;

/* Receive timestamps on e's socket (fd), once: the arrival of its data. */
void rlt_pre_latency_stamps_on(int fd, struct rlt_pre_net_fd *e);
/* Takes the receive timestamps latency turned on (not the program) out of a message the
 * program receives: it sees no control message it did not ask for. */
void rlt_pre_latency_hide_stamps(int fd, struct msghdr *m);
/* The arrival (CLOCK_MONOTONIC) a received message's SCM_TIMESTAMPNS says, 0 when it has
 * none; now: the clock read after the receive. */
rlt_ns_t rlt_pre_latency_arrival(struct msghdr *m, rlt_ns_t now);
/* When the data at the head of fd's queue reaches the program under latency c (0: nothing
 * waits; 1: now, the end of the stream). A datagram socket without a peer: the latency its
 * head datagram's source matches (none: due at its arrival), c while the socket's choice is
 * not brought up to the conditions in force. */
rlt_ns_t rlt_pre_latency_due(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c);
/* A receive under latency c: a blocking one waits for data, then for its time; a non-blocking
 * one whose data is not due gets EAGAIN (its registrations held for the edge). 1: the call
 * goes on to the kernel; 0 with *ret set: it ends. */
int rlt_pre_latency_wait(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c, int flags,
                         ssize_t *ret);

#endif
