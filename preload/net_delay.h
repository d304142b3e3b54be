/*
 * net_delay.h: a stream's latency as the program sees it (net_delay.c). Its data waits in the
 * socket's delay line (net_line.h), not in the kernel: so the receives are served from the
 * line, only what is due, and the waits report the socket readable when the line says so.
 */
#ifndef RLT_NET_DELAY_H
#define RLT_NET_DELAY_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "clock.h"
#include "net.h"

struct rlt_pre_net_fd;

/* The caller's buffer of a receive; msg: recvmsg's header (its flags and lengths written). */
struct rlt_pre_net_into {
	const struct iovec *iov;
	int cnt;
	struct msghdr *msg;
};

/* A receive of len bytes on e's stream (fd) under latency c, into `into` from offset off,
 * served from its delay line: 1 with *ret (the count, or -1 and errno). 0: the socket has no
 * line (none free, or flags it does not serve): the caller leaves the data in the kernel. */
int rlt_pre_delay_recv(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       size_t off, size_t len, int flags, const struct rlt_pre_net_into *into,
                       ssize_t *ret);
/* splice from e's stream (fd) to out: the line takes no more from then on (splice reads the
 * kernel), and what it holds goes first, when due, written to out. 1 with *ret; 0: the line
 * is empty: the kernel's splice. */
int rlt_pre_delay_splice(int fd, struct rlt_pre_net_fd *e, int out, size_t len, unsigned flags,
                         ssize_t *ret);
/* FIONREAD on a socket with a line: 1 with *n its bytes due now (what a receive would get);
 * 0: fd has no line. */
int rlt_pre_delay_inq(struct rlt_pre_net_fd *e, int *n);

/*
 * The waits. rlt_pre_net_held answers for a stream with a line (rlt_pre_delay_held) with the
 * receive events held (the line, not the kernel, says when the socket is readable) and these
 * marks, which hook_poll.c and hook_epoll.c take off:
 * OWN: the line answers for the socket's readable side: the wait's answer goes through
 * rlt_pre_delay_polled / _selected, or the epoll round (rlt_pre_delay_epoll);
 * WATCH: nothing due, and room for more: the kernel's report of the receive events means data
 * for the line (taken, and the wait goes on), so a poll keeps asking for them;
 * READY: data (or the end) is due now: the wait reports the socket readable at once.
 */
#define RLT_PRE_NET_OWN 0x20000000u
#define RLT_PRE_NET_WATCH 0x10000000u
#define RLT_PRE_NET_READY 0x08000000u
#define RLT_PRE_NET_MARKS (RLT_PRE_NET_OWN | RLT_PRE_NET_WATCH | RLT_PRE_NET_READY)
/* 1 with *h set when e's socket (fd) has a line (made now if need be); 0: it has none. */
int rlt_pre_delay_held(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       unsigned events, rlt_ns_t now, rlt_ns_t *due, unsigned *h);
/* After a poll (rc its answer): each socket with a line gets the line's answer; the new rc. */
int rlt_pre_delay_polled(struct pollfd *fds, nfds_t n, int rc);
/* After a select: the same for the read set (asked: what the program asked for). */
int rlt_pre_delay_selected(int nfds, fd_set *r, fd_set *w, fd_set *x, const fd_set *asked,
                           int rc);

/* An epoll wait's round with lines among its registrations: rlt_pre_delay_round_add from
 * epoll_hold, for each registration rlt_pre_fd_held marked OWN, gives what to hold in the
 * kernel's registration; rlt_pre_delay_epoll makes the round: the due ones reported now, else
 * a wait on the instance and the watched sockets (their data taken as it comes). */
#define RLT_PRE_DELAY_ROUND_MAX 256 /* hook_epoll.c's registrations: all of them */
struct rlt_pre_delay_round {
	unsigned n;
	struct {
		int fd;
		uint32_t events;
		uint64_t data;
		unsigned h;
	} s[RLT_PRE_DELAY_ROUND_MAX];
};
/* r NULL: what to hold only (an epoll_hold outside a wait). */
unsigned rlt_pre_delay_round_add(struct rlt_pre_delay_round *r, int fd, uint32_t events,
                                 uint64_t data, unsigned h);
int rlt_pre_delay_epoll(int epfd, struct epoll_event *evs, int max, rlt_ns_t until,
                        const sigset_t *sig, struct rlt_pre_delay_round *r);

#endif
