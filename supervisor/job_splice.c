/* job_splice.c: splice between the program's pipe and a stream socket, made on its behalf. */
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

/*
 * OP_SPLICE_SEND / OP_SPLICE_RECV: splice between the program's pipe and a stream socket (Go's
 * io.Copy between two connections, proxies). One piece a call, as splice may always return
 * less than asked (callers loop). The program's pipe is reached through our duplicate, whose
 * blocking is the program's, so nothing is asked of it that could wait:
 *  - to the socket: tee (SPLICE_F_NONBLOCK) shows the pipe's next bytes without taking them,
 *    send(MSG_DONTWAIT) sends what the socket takes, and exactly that is then read out of the
 *    pipe (it is there); an empty pipe is waited for on epoll, not in a call;
 *  - from the socket: no more than the pipe has room for is received (MSG_DONTWAIT) and
 *    written into it; a full pipe is waited for on epoll.
 * The charge is given back while the call waits for its pipe, and taken again after. The piece's
 * size, and whether it is charged before or after (a blocking receive under rules that admit
 * every charge waits for data holding no reservation), are src/pacing.c's, as for the preload.
 */
void rlt_sup_step_splice(struct rlt_sup *s, struct rlt_sup_job *j)
{
	int to_sock = j->op == OP_SPLICE_SEND;
	ssize_t n;
	int err;

	if (j->moved_unanswered) {
		/* received, charged after: its slot has come */
		rlt_sup_job_finish(s, j, (int64_t)j->done);
		return;
	}
	/* the size and when it is charged: src/pacing.c, as for any stream call (one piece a
	 * call: nothing has moved before it) */
	if (!j->charged && rlt_sup_job_piece_charge(s, j) != 0)
		return;
	if (j->charged && rlt_sup_job_wait_slot(s, j, j->t.go))
		return;
	if (to_sock) {
		ssize_t t = tee(j->src_fd, s->tee_pipe[1], j->piece, SPLICE_F_NONBLOCK);
		if (t <= 0) {
			err = errno;
			rlt_sup_job_settle(j, 0, 0);
			if (t == 0) /* empty, and no writer left: the end */
				rlt_sup_job_finish(s, j, 0);
			else if (err != EAGAIN || j->nonblock)
				rlt_sup_job_finish(s, j, -err);
			else
				rlt_sup_job_park_on(s, j, j->src_fd, EPOLLIN);
			return;
		}
		for (ssize_t got = 0; got < t;) { /* our own pipe: all of it is there */
			ssize_t k = read(s->tee_pipe[0], (char *)j->buf + got, (size_t)(t - got));
			if (k <= 0) {
				rlt_sup_job_settle(j, 0, 0);
				rlt_sup_job_finish(s, j, -EIO);
				return;
			}
			got += k;
		}
		if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
			rlt_sup_job_end(s, j);
			return;
		}
		n = send(j->sock->dup, j->buf, (size_t)t,
		         MSG_DONTWAIT | MSG_NOSIGNAL | ((j->flags & SPLICE_F_MORE) ? MSG_MORE : 0));
		err = errno;
		/* what went out leaves the pipe, as splice would have taken it */
		if (n > 0 && read(j->src_fd, j->buf, (size_t)n) != n)
			rlt_sup_log(s, RLT_LOG_WARN, j->proc->tgid,
			            "splice: the pipe of fd %d was read by another thread meanwhile",
			            (int)j->args[0]);
	} else {
		int cap = fcntl(j->src_fd, F_GETPIPE_SZ), queued = 0;
		if (cap < 0 || ioctl(j->src_fd, FIONREAD, &queued) != 0)
			cap = queued = 0;
		size_t room = cap > queued ? (size_t)(cap - queued) : 0;
		if (!room) {
			rlt_sup_job_settle(j, 0, 0);
			if (j->nonblock)
				rlt_sup_job_finish(s, j, -EAGAIN);
			else
				rlt_sup_job_park_on(s, j, j->src_fd, EPOLLOUT);
			return;
		}
		if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
			rlt_sup_job_end(s, j);
			return;
		}
		n = recv(j->sock->dup, j->buf, j->piece < room ? j->piece : room, MSG_DONTWAIT);
		err = errno;
		for (ssize_t put = 0; n > 0 && put < n;) { /* there is room: this does not wait */
			ssize_t k = write(j->src_fd, (char *)j->buf + put, (size_t)(n - put));
			if (k <= 0) {
				rlt_sup_log(s, RLT_LOG_WARN, j->proc->tgid,
				            "splice: %zd bytes lost: the pipe of fd %d filled meanwhile",
				            n - put, (int)j->args[2]);
				break;
			}
			put += k;
		}
	}
	if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
		if (j->nonblock) {
			rlt_sup_job_settle(j, 0, 0);
			rlt_sup_job_finish(s, j, -EAGAIN);
		} else {
			rlt_sup_job_park(s, j, to_sock ? EPOLLOUT : EPOLLIN); /* holding its charge, if any */
		}
		return;
	}
	if (n < 0) {
		rlt_sup_job_settle(j, 0, 0);
		if (err == EPIPE && to_sock)
			syscall(SYS_tgkill, j->proc->tgid, j->tid, SIGPIPE);
		rlt_sup_job_finish(s, j, -err);
		return;
	}
	/* charged after (it waited for data holding no reservation): charged now, answered at
	 * its slot (a signal meanwhile answers the count: the bytes are in the program's pipe) */
	rlt_sup_job_charge_moved(j, (uint64_t)n);
	if (rlt__pace_charge_after(&j->pace) && n > 0) {
		j->done = (uint64_t)n;
		j->moved_unanswered = 1;
		if (rlt_sup_job_wait_slot(s, j, j->t.go))
			return;
	}
	rlt_sup_job_finish(s, j, n);
}
