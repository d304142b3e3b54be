/*
 * job_stream.c: a stream receive or send (and sendfile to a stream) made by us on the
 * program's behalf, piece by piece, each piece charged and paced.
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

/* Bytes [done, done + len) of the program's buffer (flat or iovec) to or from ours. */
static int prog_data(struct rlt_sup_job *j, size_t len, int write)
{
	uint64_t base = j->op == OP_SEND || j->op == OP_RECV ? j->args[1] : 0;

	if (j->iov)
		return write ? rlt_sup_iov_scatter(j->tid, j->iov, j->iovcnt, j->done, j->buf, len)
		             : rlt_sup_iov_gather(j->tid, j->iov, j->iovcnt, j->done, j->buf, len);
	return write ? rlt_sup_mem_write(j->tid, base + j->done, j->buf, len)
	             : rlt_sup_mem_read(j->tid, base + j->done, j->buf, len);
}

/* What a receive made for the program writes besides the data: a stream has no source
 * address and no ancillary data here. */
static void recv_out_params(struct rlt_sup_job *j)
{
	if (j->fromlen_addr && j->from_addr) {
		socklen_t zero = 0;
		rlt_sup_mem_write(j->tid, j->fromlen_addr, &zero, sizeof zero);
	}
	if (j->msg_addr) {
		struct msghdr h;
		if (rlt_sup_mem_read(j->tid, j->msg_addr, &h, sizeof h) == 0) {
			h.msg_namelen = 0;
			h.msg_controllen = 0;
			h.msg_flags = 0;
			rlt_sup_mem_write(j->tid, j->msg_addr, &h, sizeof h);
		}
	}
}

/* OP_SEND and OP_RECV: a stream call made by us, piece by piece. */
/* The job's buffer, at least len bytes. 0 or -ENOMEM. */
int rlt_sup_job_buf(struct rlt_sup_job *j, size_t len)
{
	if (len <= j->buf_len)
		return 0;
	void *b = realloc(j->buf, len);
	if (!b)
		return -ENOMEM;
	j->buf = b;
	j->buf_len = len;
	return 0;
}

/* Between two pieces: the call ends with what it moved when it does not go on, or when its
 * thread has a signal (the kernel ends a blocking call interrupted after it moved data: the
 * handler runs within a piece). 1: make the next piece. */
static int next_piece(struct rlt_sup *s, struct rlt_sup_job *j, int more)
{
	enum rlt_sup_sig f = more ? rlt_sup_signal_for(j) : RLT_SIG_NONE;

	if (!more || f == RLT_SIG_YES || f == RLT_SIG_MAYBE) {
		rlt_sup_job_finish(s, j, (int64_t)j->done);
		return 0;
	}
	return 1;
}

/* The decisions (piece sizes, charge before or after, whether the call goes on) are
 * src/pacing.c's, the preload's too; this is the supervisor's mechanics: a step that makes one
 * piece at a time and, rather than wait, parks on epoll or the timer heap. */
void rlt_sup_step_stream(struct rlt_sup *s, struct rlt_sup_job *j)
{
	struct rlt__pace *p = &j->pace;

	/* Bounded: every round either moves bytes toward total, or returns. */
	for (;;) {
		if (j->moved_unanswered) {
			/* a receive charged after it moved: its slot has come */
			j->moved_unanswered = 0;
			if (!next_piece(s, j, j->go_on))
				return;
		}
		if (!j->charged && rlt_sup_job_piece_charge(s, j) != 0)
			return;
		if (j->charged && rlt_sup_job_wait_slot(s, j, j->t.go))
			return;
		ssize_t n;
		if (j->op == OP_SENDFILE) {
			/* the file's next bytes, read at our offset (the program's file position moves
			 * with what is sent, below); a short read is the end of the file */
			ssize_t r = pread(j->src_fd, j->buf, j->piece, j->src_off);
			if (r <= 0) {
				int e = errno;
				rlt_sup_job_settle(j, 0, 0);
				rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : r == 0 ? 0 : -e);
				return;
			}
			j->piece = (uint64_t)r;
			if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
				rlt_sup_job_end(s, j);
				return;
			}
			n = send(j->sock->dup, j->buf, j->piece, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				j->src_off += n;
				if (!j->off_addr)
					lseek(j->src_fd, j->src_off, SEEK_SET);
			}
		} else if (j->op == OP_SEND) {
			int rc = prog_data(j, j->piece, 0);
			if (rc) {
				rlt_sup_job_settle(j, 0, 0);
				rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : rc);
				return;
			}
			/* TOCTOU: what we read is acted on only if the call is still the program's */
			if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
				rlt_sup_job_end(s, j);
				return;
			}
			n = send(j->sock->dup, j->buf, j->piece,
			         MSG_DONTWAIT | MSG_NOSIGNAL | (j->flags & (MSG_MORE | MSG_OOB | MSG_EOR)));
		} else {
			if (!rlt_sup_notif_valid(s->notify_fd, j->id)) {
				rlt_sup_job_end(s, j);
				return;
			}
			n = recv(j->sock->dup, j->buf, j->piece, MSG_DONTWAIT | (j->flags & MSG_OOB));
		}
		int err = errno;
		if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			if (j->nonblock) {
				rlt_sup_job_settle(j, 0, 0);
				rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : -EAGAIN);
				return;
			}
			/* blocking: the call waits for its socket, holding its charge (if it is
			 * charged before) */
			rlt_sup_job_park(s, j, j->op != OP_RECV ? EPOLLOUT : EPOLLIN);
			return;
		}
		if (n < 0) {
			rlt_sup_job_settle(j, 0, 0);
			if (err == EPIPE && j->op != OP_RECV && !(j->flags & MSG_NOSIGNAL) && !j->done)
				syscall(SYS_tgkill, j->proc->tgid, j->tid, SIGPIPE);
			rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : -err);
			return;
		}
		if (j->op == OP_RECV && n > 0) {
			int rc = prog_data(j, (size_t)n, 1);
			if (rc) {
				/* the program's buffer is not all there: as the kernel would, EFAULT;
				 * the bytes are lost to it, as they would be */
				rlt_sup_job_settle(j, (uint64_t)n, j->done == 0); /* charged before */
				rlt_sup_job_finish(s, j, j->done ? (int64_t)j->done : rc);
				return;
			}
		}
		/* the bytes have moved: settled at once, so that a signal during the wait below
		 * keeps them charged and answers their count */
		rlt_sup_job_charge_moved(j, (uint64_t)n);
		int more = rlt__pace_after(p, j->piece, (uint64_t)n, 0);
		j->done = p->done;
		if (j->op == OP_RECV && n > 0 && j->done == (uint64_t)n)
			recv_out_params(j);
		if (rlt__pace_charge_after(p) && n > 0) {
			/* the answer (or the next piece) waits for the slot of what came */
			j->go_on = more;
			j->moved_unanswered = 1;
			if (rlt_sup_job_wait_slot(s, j, j->t.go))
				return;
			j->moved_unanswered = 0;
		}
		if (!next_piece(s, j, more))
			return;
	}
}
