/*
 * hook_poll.h: the waits (hook_poll.c: poll and select, hook_epoll.c: epoll) hold a throttled
 * socket's event until its budget allows the call it announces, for both fronts.
 */
#ifndef RLT_HOOK_POLL_H
#define RLT_HOOK_POLL_H

#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>

#include "clock.h"
#include "policy.h"

/* The events of `events` (POLLIN, POLLRDNORM; POLLOUT, POLLWRNORM) on fd that a wait holds back at `now` because the
 * budget does not allow the call they announce yet (src/ready.h); *due is lowered to when the
 * earliest of them is due. 0 for anything not a throttled socket. The one place a wait asks
 * "not ready before T": what else holds a socket back (network conditions) goes here. */
unsigned rlt_pre_fd_held(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due);
/* The events a wait reports ready for fd by itself, whatever the kernel says: a listener's
 * queued connection it hands over now (accept_queue.h). Else 0, *due lowered to when it will. */
unsigned rlt_pre_fd_ready_own(int fd, unsigned events, rlt_ns_t now, rlt_ns_t *due);
/* A wait goes round at most this often (each round sleeps until something is due). */
#define RLT_PRE_WAIT_ROUNDS 100000
/* The events that announce a receive, a send (epoll's EPOLLIN... have the same values). */
#define RLT_PRE_IN_EVENTS (POLLIN | POLLRDNORM)
#define RLT_PRE_OUT_EVENTS (POLLOUT | POLLWRNORM)
/* Whether a hold can begin inside a call, on a socket a wait may already be asleep on: a
 * connect or accept rule (a connect held, a listener's queue), network conditions. */
int rlt_pre_holds_in_calls(void);
/* What poll and epoll (hook_epoll.c) share: whether any wait can hold a socket back now;
 * whether fd is a socket whose `events` one may hold (no clock read, no system call but the
 * first look at a never-seen fd); the caller's deadline from a relative timeout (NULL:
 * none). */
int rlt_pre_wait_may_hold(void);
int rlt_pre_wait_may_hold_fd(int fd, unsigned events);
rlt_ns_t rlt_pre_wait_deadline(const struct timespec *t, rlt_ns_t now);
/* Or'ed into rlt_pre_fd_held's answer when the socket is held whole (a connect or accept due
 * later): its errors and hang-ups too, which the kernel reports whatever the events asked, so
 * that a refused attempt is not reported before its charge is due either. */
#define RLT_PRE_HELD_WHOLE 0x40000000u
/* A non-blocking call on fd was refused for its budget (EAGAIN; var: RLT_VAR_SEND, or
 * RLT_VAR_RECV or RLT_VAR_ACCEPT for its readable side): its epoll registrations are held
 * now, so that the wait that finds it due puts the event back, which gives an edge-triggered
 * registration its edge. */
void rlt_pre_fd_refused(int fd, enum rlt_var var);
/* Takes fd's epoll registrations out whole now (a connect or accept due later), before a
 * thread already asleep in their wait can be told of the socket. */
void rlt_pre_fd_hold_whole(int fd);
/* fd is closed: the epoll registrations kept for it go (the kernel's went with the file). */
void rlt_pre_fd_regs_closed(int fd);
/* 1 when a wait may hold fd back (a send or receive rule applies to it, a connect or accept
 * let it go later, it listens under an accept rule, or a network condition applies to it):
 * no clock read; under the system-call front a call on it asks then whether it is held now
 * (trap_waits.c). */
int rlt_pre_fd_holdable(int fd);
/* The waits with the C library's convention (-1 and errno), for both fronts. */
int rlt_pre_poll(struct pollfd *fds, nfds_t n, int ms);
int rlt_pre_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *sig);
int rlt_pre_select(int nfds, fd_set *r, fd_set *w, fd_set *x, struct timeval *tv);
int rlt_pre_pselect(int nfds, fd_set *r, fd_set *w, fd_set *x, const struct timespec *tmo,
                    const sigset_t *sig);
int rlt_pre_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
/* Under the system-call front epoll_ctl may trap only from some moment on (trap_waits.c): a
 * registration made before is read back from the kernel and recorded as its EPOLL_CTL_ADD
 * would have been (_adopt); then what is held on the instance is taken out at once
 * (_hold_now). */
void rlt_pre_epoll_adopt(int epfd, int fd, uint32_t events, uint64_t data);
void rlt_pre_epoll_hold_now(int epfd);
int rlt_pre_epoll_pwait(int epfd, struct epoll_event *evs, int max, int ms, const sigset_t *sig);
int rlt_pre_epoll_pwait2(int epfd, struct epoll_event *evs, int max, const struct timespec *tmo,
                         const sigset_t *sig);

#endif
