/*
 * job_accept.c: accept made on the program's behalf, the connection installed in it; a
 * connection accepted for a call given up for a signal waits for the restarted call.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "internal.h"

static struct rlt_sup_accepted *stash_take(struct rlt_sup_proc *p, int lfd)
{
	for (struct rlt_sup_accepted **pp = &p->stash; *pp; pp = &(*pp)->next)
		if ((*pp)->lfd == lfd) {
			struct rlt_sup_accepted *a = *pp;
			*pp = a->next;
			return a;
		}
	return NULL;
}

/* OP_ACCEPT: accepted by us (so that the rules can see the peer, and a shed connection is
 * taken off the queue), charged after, installed in the program with SECCOMP_ADDFD. */
void rlt_sup_step_accept(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (j->accepted < 0) {
		struct rlt_sup_accepted *a = stash_take(j->proc, j->fd);
		if (a) {
			j->accepted = a->sock;
			j->apeer = a->peer;
			if (a->conns_mask)
				rlt_sup_conns_release(s, a->conns_mask, &a->conns_peer);
			free(a);
		} else {
			struct pollfd pfd = {j->sock->dup, POLLIN, 0};
			struct sockaddr_storage ss;
			socklen_t sl = sizeof ss;
			int c = -1;
			if (poll(&pfd, 1, 0) == 1) {
				if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
					rlt_sup_job_end(s, j);
					return;
				}
				c = accept4(j->sock->dup, (struct sockaddr *)&ss, &sl,
				            SOCK_CLOEXEC | (j->flags & SOCK_NONBLOCK));
				if (c < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
					rlt_sup_job_finish(s, j, -errno);
					return;
				}
			}
			if (c < 0) {
				if (rlt_sup_job_nonblocking(j))
					rlt_sup_job_finish(s, j, -EAGAIN);
				else
					rlt_sup_job_park(s, j, EPOLLIN);
				return;
			}
			j->accepted = c;
			rlt__peer_from_sockaddr(&j->apeer, (struct sockaddr *)&ss, sl);
		}
		/* key=port of an accepted connection is the local, listening port (rlthrottle(7) RULES) */
		j->kpeer = j->apeer;
		j->kpeer.port = j->sock->local_port;
		j->mask = rlt__match_accept(s->rs, &j->apeer, j->sock->local_port);
		j->nmask = rlt__match_on(s->rs, RLT_VAR_CONNS, &j->apeer, j->sock->af);
		int rc = rlt_sup_job_charge(j, 0, 1);
		if (rc) {
			/* shed, as an overloaded server does: off the queue and closed */
			rlt_sup_log(s, RLT_LOG_DEBUG, j->proc->tgid,
			            "accept on fd %d: connection shed", j->fd);
			rlt_sup_job_finish(s, j, rc);
			return;
		}
	}
	if (rlt_sup_slot_then_conns(s, j))
		return;
	if (j->args[1] && j->args[2]) {
		socklen_t have, sl;
		struct sockaddr_storage ss;
		sl = sizeof ss;
		if (getpeername(j->accepted, (struct sockaddr *)&ss, &sl) == 0 &&
		    rlt_sup_mem_read(j->tid, j->args[2], &have, sizeof have) == 0) {
			rlt_sup_mem_write(j->tid, j->args[1], &ss, have < sl ? have : sl);
			rlt_sup_mem_write(j->tid, j->args[2], &sl, sizeof sl);
		}
	}
	int nfd = rlt_sup_notif_addfd_send(s->notify_fd, j->id, j->accepted, j->cloexec);
	if (nfd == -ENOENT) {
		rlt_sup_job_end(s, j); /* the thread died: the connection is closed */
		return;
	}
	if (nfd < 0) {
		rlt_sup_job_finish(s, j, nfd);
		return;
	}
	rlt_sup_job_settle(j, 0, 1);
	if (rlt_sup_fd_adopt(s, j->proc, nfd, j->accepted, SOCK_STREAM, &j->apeer,
	                     j->conns_held ? j->nmask : 0, &j->kpeer) == 0) {
		j->accepted = -1; /* the cache owns it now, and its RLT_CONNS slots */
		j->conns_held = 0;
	}
	rlt_sup_job_end(s, j);
}
