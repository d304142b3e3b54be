/* job_dgram.c: a datagram receive: measured, charged whole, then let through. */
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

/* OP_DGRAM_RECV: a datagram is charged whole, once it is there to be measured. */
void rlt_sup_step_dgram_recv(struct rlt_sup *s, struct rlt_sup_job *j)
{
	if (!j->charged && rlt_sup_job_prepaid_take(s, j)) {
		/* restarted after its handler: it has paid and waited (if another thread took
		 * its datagram meanwhile, the kernel waits for the next, unthrottled) */
		j->paid = 1;
		if (rlt_sup_job_restart_paid(s, j))
			return;
		rlt_sup_notif_continue(s->notify_fd, j->id);
		rlt_sup_job_end(s, j);
		return;
	}
	if (!j->charged) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		ssize_t n = recvfrom(j->sock->dup, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT,
		                     (struct sockaddr *)&ss, &sl);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (j->nonblock) {
				/* nothing to charge: the kernel answers EAGAIN itself */
				rlt_sup_notif_continue(s->notify_fd, j->id);
				rlt_sup_job_end(s, j);
				return;
			}
			rlt_sup_job_park(s, j, EPOLLIN);
			return;
		}
		if (n < 0) {
			/* an error the real call will report itself */
			rlt_sup_notif_continue(s->notify_fd, j->id);
			rlt_sup_job_end(s, j);
			return;
		}
		j->mask = j->sock->mask[RLT_VAR_RECV];
		if (!j->sock->peer.af && sl > 0) {
			struct rlt__peer p;
			rlt__peer_from_sockaddr(&p, (struct sockaddr *)&ss, sl);
			if (p.af) {
				j->mask = rlt__match(s->rs, RLT_VAR_RECV, &p);
				j->kpeer = p;
			}
		}
		if (!j->mask) {
			rlt_sup_notif_continue(s->notify_fd, j->id);
			rlt_sup_job_end(s, j);
			return;
		}
		int rc = rlt_sup_job_charge(j, (uint64_t)n, 1);
		if (rc) {
			/* a policer drops the packet */
			if (rlt_sup_notif_valid(s->notify_fd, j->id))
				recv(j->sock->dup, NULL, 0, MSG_DONTWAIT | MSG_TRUNC);
			rlt_sup_job_finish(s, j, rc);
			return;
		}
	}
	if (rlt_sup_job_wait_slot(s, j, j->t.go))
		return;
	if (rlt_sup_job_continue_paid(s, j, 1))
		return;
	rlt_sup_job_end(s, j);
}
