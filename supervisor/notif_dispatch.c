/*
 * notif_dispatch.c: what a notification becomes. The fast path answers at once (CONTINUE after two
 * look-ups: a file, a pipe, a terminal, a socket no rule matches, a kind of call no rule
 * limits); every other call becomes a job (job_table.c) with what it asked read from the program.
 * Runs under the supervisor's lock, from the lane or the loop (notify_loop.c).
 */
#include <errno.h>
#include <fcntl.h>
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
#include "connect_attempt.h"
#include "internal.h"

static void answer_continue(struct rlt_sup *s, uint64_t id)
{
	s->continued_fast++;
	rlt_sup_notif_continue(s->notify_fd, id);
}

static void on_recv(struct rlt_sup *s, const struct seccomp_notif *req, struct rlt_sup_proc *p,
                    struct rlt_sup_sock *k)
{
	uint64_t a[6];

	memcpy(a, req->data.args, sizeof a);
	int nr = req->data.nr, flags = 0;

	if (nr == SYS_recvfrom || nr == SYS_recvmmsg)
		flags = (int)a[3];
	else if (nr == SYS_recvmsg)
		flags = (int)a[2];
	if (flags & MSG_PEEK) {
		answer_continue(s, req->id); /* not charged (rlthrottle(7) BEHAVIOUR) */
		return;
	}
	if (k->type != SOCK_STREAM) {
		struct rlt_sup_job *j = rlt_sup_job_new(s, req, p, (int)a[0], k, OP_DGRAM_RECV, RLT_VAR_RECV, 0);
		if (!j) {
			rlt_sup_notif_error(s->notify_fd, req->id, ENOMEM);
			return;
		}
		j->flags = flags;
		j->nonblock = rlt_sup_job_nonblocking(j);
		rlt_sup_job_step(s, j);
		return;
	}
	if (!k->mask[RLT_VAR_RECV]) {
		answer_continue(s, req->id);
		return;
	}
	struct rlt_sup_job *j = rlt_sup_job_new(s, req, p, (int)a[0], k, OP_RECV, RLT_VAR_RECV,
	                                        k->mask[RLT_VAR_RECV]);
	int rc = 0;
	if (!j) {
		rlt_sup_notif_error(s->notify_fd, req->id, ENOMEM);
		return;
	}
	j->flags = flags;
	switch (nr) {
	case SYS_read:
		j->total = a[2];
		break;
	case SYS_recvfrom:
		j->total = a[2];
		j->from_addr = a[4];
		j->fromlen_addr = a[5];
		break;
	case SYS_readv:
		rc = rlt_sup_job_iov(j, a[1], a[2]);
		break;
	case SYS_recvmsg: {
		struct msghdr h;
		rc = rlt_sup_mem_read(j->tid, a[1], &h, sizeof h);
		if (rc == 0 && h.msg_controllen && k->af == AF_UNIX) {
			/* fds in flight must land in the program, not in us: the kernel makes this
			 * one, charged what it may take at most */
			j->op = OP_CONTINUE;
			rc = rlt_sup_job_iov(j, (uint64_t)(uintptr_t)h.msg_iov, h.msg_iovlen);
			break;
		}
		if (rc == 0)
			rc = rlt_sup_job_iov(j, (uint64_t)(uintptr_t)h.msg_iov, h.msg_iovlen);
		j->msg_addr = a[1];
		break;
	}
	default: { /* recvmmsg on a stream (no message boundaries): made by us into its first
	            * message, what the budget allows, and answered 1 (finish) */
		struct mmsghdr m;
		rc = a[2] ? rlt_sup_mem_read(j->tid, a[1], &m, sizeof m) : -EINVAL;
		if (rc == 0 && m.msg_hdr.msg_controllen && k->af == AF_UNIX)
			j->op = OP_CONTINUE; /* fds in flight: as recvmsg above */
		if (rc == 0)
			rc = rlt_sup_job_iov(j, (uint64_t)(uintptr_t)m.msg_hdr.msg_iov, m.msg_hdr.msg_iovlen);
		j->msg_addr = a[1]; /* a struct mmsghdr starts with its struct msghdr */
		break;
	}
	}
	if (rc) {
		/* a bad pointer or count: the kernel reports it itself */
		rlt_sup_job_end(s, j);
		answer_continue(s, req->id);
		return;
	}
	if (j->total == 0) {
		rlt_sup_job_end(s, j);
		answer_continue(s, req->id);
		return;
	}
	j->nonblock = rlt_sup_job_nonblocking(j);
	if (j->op == OP_RECV)
		rlt__pace_begin(&j->pace, p->rs, RLT_VAR_RECV, j->mask, j->total,
		                RLT_PACE_MADE_NONBLOCK | (j->nonblock ? RLT_PACE_NONBLOCK : 0) |
		                        ((flags & MSG_WAITALL) ? RLT_PACE_WAITALL : 0));
	rlt_sup_job_step(s, j);
}

static void on_send(struct rlt_sup *s, const struct seccomp_notif *req, struct rlt_sup_proc *p,
                    struct rlt_sup_sock *k)
{
	uint64_t a[6];

	memcpy(a, req->data.args, sizeof a);
	int nr = req->data.nr, rc = 0, control = 0;
	struct sockaddr_storage to;
	socklen_t tolen = 0;
	uint64_t msgs = 1;
	struct rlt_sup_job *j = rlt_sup_job_new(s, req, p, (int)a[0], k, OP_CONTINUE, RLT_VAR_SEND, 0);

	if (!j) {
		rlt_sup_notif_error(s->notify_fd, req->id, ENOMEM);
		return;
	}
	switch (nr) {
	case SYS_write:
		j->total = a[2];
		break;
	case SYS_sendto:
		j->total = a[2];
		j->flags = (int)a[3];
		if (a[4] && a[5] > 0) {
			tolen = a[5] < sizeof to ? (socklen_t)a[5] : sizeof to;
			rc = rlt_sup_mem_read(j->tid, a[4], &to, tolen);
		}
		break;
	case SYS_writev:
		rc = rlt_sup_job_iov(j, a[1], a[2]);
		break;
	case SYS_sendmsg: {
		struct msghdr h;
		j->flags = (int)a[2];
		rc = rlt_sup_mem_read(j->tid, a[1], &h, sizeof h);
		if (rc == 0)
			rc = rlt_sup_job_iov(j, (uint64_t)(uintptr_t)h.msg_iov, h.msg_iovlen);
		if (rc == 0 && h.msg_name && h.msg_namelen) {
			tolen = h.msg_namelen < sizeof to ? h.msg_namelen : sizeof to;
			rc = rlt_sup_mem_read(j->tid, (uint64_t)(uintptr_t)h.msg_name, &to, tolen);
		}
		control = h.msg_controllen != 0;
		break;
	}
	case SYS_sendmmsg: {
		/* charged together, bytes and messages, made by the kernel (as the preload does) */
		uint64_t vlen = a[2] > RLT_SUP_IOV_MAX ? RLT_SUP_IOV_MAX : a[2];
		struct mmsghdr *v = calloc(vlen ? vlen : 1, sizeof *v);
		j->flags = (int)a[3];
		rc = v ? rlt_sup_mem_read(j->tid, a[1], v, vlen * sizeof *v) : -ENOMEM;
		for (uint64_t i = 0; rc == 0 && i < vlen; i++) {
			struct iovec iov[64];
			uint64_t t = 0;
			uint64_t cnt = v[i].msg_hdr.msg_iovlen;
			for (uint64_t off = 0; rc == 0 && off < cnt; off += 64) {
				uint64_t c = cnt - off < 64 ? cnt - off : 64;
				rc = rlt_sup_iov_read(j->tid, (uint64_t)(uintptr_t)(v[i].msg_hdr.msg_iov + off), c,
				                      iov, &t);
				j->total += t;
			}
		}
		if (rc == 0 && vlen && v[0].msg_hdr.msg_name && v[0].msg_hdr.msg_namelen) {
			tolen = v[0].msg_hdr.msg_namelen < sizeof to ? v[0].msg_hdr.msg_namelen : sizeof to;
			rc = rlt_sup_mem_read(j->tid, (uint64_t)(uintptr_t)v[0].msg_hdr.msg_name, &to, tolen);
		}
		free(v);
		msgs = vlen;
		control = 1;
		break;
	}
	default: /* sendfile(out, in, offset, count) */
		j->total = a[3];
		control = 1;
		if (k->type != SOCK_STREAM)
			break;
		/* made for the program from a duplicate of its file, piece by piece, when the file
		 * can be read at an offset; else (a pipe) charged whole, as the preload cannot do
		 * better either */
		j->src_fd = rlt_sup_getfd(p->pidfd, (int)a[1]);
		if (j->src_fd >= 0 && a[2]) {
			int64_t off;
			rc = rlt_sup_mem_read(j->tid, a[2], &off, sizeof off);
			j->src_off = off;
			j->off_addr = a[2];
		} else if (j->src_fd >= 0) {
			j->src_off = lseek(j->src_fd, 0, SEEK_CUR);
		}
		if (j->src_fd >= 0 && (j->src_off < 0 || lseek(j->src_fd, 0, SEEK_CUR) < 0)) {
			close(j->src_fd);
			j->src_fd = -1;
		}
		break;
	}
	if (rc || (j->total == 0 && k->type == SOCK_STREAM) || msgs == 0) {
		rlt_sup_job_end(s, j);
		answer_continue(s, req->id);
		return;
	}
	j->mask = k->mask[RLT_VAR_SEND];
	if (k->type != SOCK_STREAM && !k->peer.af && tolen) {
		struct rlt__peer pe;
		rlt__peer_from_sockaddr(&pe, (struct sockaddr *)&to, tolen);
		if (pe.af) {
			j->mask = rlt__match(s->rs, RLT_VAR_SEND, &pe);
			j->kpeer = pe;
		}
	}
	/* TOCTOU: the address and lengths we read are only acted on for a live call */
	if (!j->mask || !rlt_sup_notif_valid(s->notify_fd, req->id)) {
		rlt_sup_job_end(s, j);
		answer_continue(s, req->id);
		return;
	}
	j->t.msgs = msgs;
	int nonblock = k->type == SOCK_STREAM && rlt_sup_job_nonblocking(j);
	unsigned pf = RLT_PACE_MADE_NONBLOCK | (nonblock ? RLT_PACE_NONBLOCK : 0);
	int whole = 1;
	if (j->src_fd >= 0) {
		j->op = OP_SENDFILE;
		j->nonblock = nonblock;
		rlt__pace_begin(&j->pace, p->rs, RLT_VAR_SEND, j->mask, j->total, pf);
		whole = 0;
	} else if (k->type == SOCK_STREAM && !control) {
		/* one that goes whole is charged whole and made by the kernel in one call, below:
		 * records of threads sharing the socket stay whole; a larger one is made by us */
		rlt__pace_begin(&j->pace, p->rs, RLT_VAR_SEND, j->mask, j->total,
		                pf | RLT_PACE_KEEP_WHOLE);
		whole = j->pace.mode == RLT_PACE_WHOLE;
		if (!whole) {
			j->op = OP_SEND;
			j->nonblock = nonblock;
		}
	}
	if (whole && nonblock) {
		/* a non-blocking send to a full socket fails with EAGAIN: not charged */
		struct pollfd pfd = {k->dup, POLLOUT, 0};
		if (poll(&pfd, 1, 0) == 0) {
			rlt_sup_job_end(s, j);
			answer_continue(s, req->id);
			return;
		}
	}
	rlt_sup_job_step(s, j);
}

static void on_connect(struct rlt_sup *s, const struct seccomp_notif *req, struct rlt_sup_proc *p,
                       struct rlt_sup_sock *k)
{
	uint64_t a[6];

	memcpy(a, req->data.args, sizeof a);
	struct sockaddr_storage ss;
	socklen_t len = a[2] < sizeof ss ? (socklen_t)a[2] : sizeof ss;
	struct rlt__peer peer;
	uint32_t cmask = 0, nmask = 0;

	if (!a[1] || len < sizeof(sa_family_t) ||
	    rlt_sup_mem_read((pid_t)req->pid, a[1], &ss, len) != 0 ||
	    !rlt_sup_notif_valid(s->notify_fd, req->id)) {
		answer_continue(s, req->id);
		return;
	}
	rlt__peer_from_sockaddr(&peer, (struct sockaddr *)&ss, len);
	if (peer.af == 0) {
		/* AF_UNSPEC dissolves a datagram socket's association */
		if (ss.ss_family == AF_UNSPEC) {
			memset(&k->peer, 0, sizeof k->peer);
			rlt_sup_sock_rematch(s, k);
		}
		answer_continue(s, req->id);
		return;
	}
	k->peer = peer;
	rlt_sup_sock_rematch(s, k);
	/* a connect() may only ask how an attempt went: asked of our duplicate, the same socket,
	 * while the program's call waits for our answer (every time: a socket inherited
	 * mid-attempt is new to us, not to the kernel) */
	cmask = k->mask[RLT_VAR_CONNECT];
	nmask = k->mask[RLT_VAR_CONNS];
	rlt__connect_counts(k->dup, k->type, 1, k->conns_mask != 0, &cmask, &nmask);
	if (!cmask && !nmask) {
		answer_continue(s, req->id);
		return;
	}
	struct rlt_sup_job *j = rlt_sup_job_new(s, req, p, (int)a[0], k, OP_CONTINUE, RLT_VAR_CONNECT, cmask);
	if (!j) {
		rlt_sup_notif_error(s->notify_fd, req->id, ENOMEM);
		return;
	}
	j->nmask = nmask;
	rlt_sup_job_step(s, j);
}

/* splice(in, off_in, out, off_out, len, flags): one end is a pipe, so at most one is a socket.
 * A stream socket with a rule for the direction makes it a job; anything else goes through. */
static void on_splice(struct rlt_sup *s, const struct seccomp_notif *req)
{
	uint64_t a[6];
	int rc = 0, sockfd = -1, pipefd = -1;
	enum rlt_var var = RLT_VAR_SEND;
	struct rlt_sup_sock *k = NULL;
	struct rlt_sup_proc *p;

	memcpy(a, req->data.args, sizeof a);
	p = rlt_sup_proc_of_tid(s, (pid_t)req->pid, &rc);
	if (p && s->rs->n[RLT_VAR_SEND]) {
		k = rlt_sup_fd_facts(s, p, (int)a[2], &rc);
		if (k && k != RLT_NOT_SOCKET && k->type == SOCK_STREAM && k->mask[RLT_VAR_SEND] &&
		    !a[1]) {
			sockfd = (int)a[2];
			pipefd = (int)a[0];
		}
	}
	if (sockfd < 0 && p && s->rs->n[RLT_VAR_RECV]) {
		k = rlt_sup_fd_facts(s, p, (int)a[0], &rc);
		if (k && k != RLT_NOT_SOCKET && k->type == SOCK_STREAM && k->mask[RLT_VAR_RECV] &&
		    !a[3]) {
			sockfd = (int)a[0];
			pipefd = (int)a[2];
			var = RLT_VAR_RECV;
		}
	}
	/* an offset on the pipe's side is the kernel's to refuse (ESPIPE); a length 0 is 0 */
	if (sockfd < 0 || a[4] == 0) {
		answer_continue(s, req->id);
		return;
	}
	if (s->tee_pipe[0] < 0 && pipe2(s->tee_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
		fcntl(s->tee_pipe[0], F_SETPIPE_SZ, 1 << 20); /* a piece at once, when allowed */
	struct rlt_sup_job *j = rlt_sup_job_new(s, req, p, sockfd, k,
	                                        var == RLT_VAR_SEND ? OP_SPLICE_SEND : OP_SPLICE_RECV,
	                                        var, k->mask[var]);
	struct stat st;
	if (!j) {
		rlt_sup_notif_error(s->notify_fd, req->id, ENOMEM);
		return;
	}
	j->src_fd = rlt_sup_getfd(p->pidfd, pipefd);
	if (j->src_fd < 0 || fstat(j->src_fd, &st) != 0 || !S_ISFIFO(st.st_mode) ||
	    s->tee_pipe[0] < 0) {
		rlt_sup_job_end(s, j);
		answer_continue(s, req->id);
		return;
	}
	j->total = a[4];
	j->flags = (int)a[5];
	j->nonblock = (a[5] & SPLICE_F_NONBLOCK) || (fcntl(k->dup, F_GETFL) & O_NONBLOCK);
	rlt__pace_begin(&j->pace, p->rs, var, j->mask, j->total,
	                RLT_PACE_MADE_NONBLOCK | (j->nonblock ? RLT_PACE_NONBLOCK : 0));
	rlt_sup_job_step(s, j);
}

static void dispatch(struct rlt_sup *s, const struct seccomp_notif *r)
{
	const struct seccomp_notif req = *r;
	struct rlt_sup_proc *p;
	struct rlt_sup_sock *k;
	struct rlt_sup_job *old;
	enum rlt_var var;
	int rc = 0, fd;

	s->notifications++;
	uint64_t a[6];
	memcpy(a, req.data.args, sizeof a);
	int nr = req.data.nr;

	/* A thread whose call we received cannot leave it but by death (the filter's
	 * WAIT_KILLABLE_RECV): a job still here for this thread id is a dead thread's, whose id
	 * the kernel gave again before the tick noticed. */
	old = rlt_sup_job_of_tid(s, (pid_t)req.pid);
	if (old)
		rlt_sup_job_end(s, old);

	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
		var = RLT_VAR_RECV;
		break;
	case SYS_write:
	case SYS_writev:
	case SYS_sendto:
	case SYS_sendmsg:
	case SYS_sendmmsg:
	case SYS_sendfile:
		var = RLT_VAR_SEND;
		break;
	case SYS_connect:
		var = RLT_VAR_CONNECT;
		break;
	case SYS_splice:
		on_splice(s, &req);
		return;
	case SYS_accept:
	case SYS_accept4:
		var = RLT_VAR_ACCEPT;
		break;
	default:
		/* no other call is notified (the fd table is checked where it is used: fd_facts.c) */
		answer_continue(s, req.id);
		return;
	}

	/* No rule for this kind of call at all: straight through, no look-up. A connect is looked
	 * at while any rule exists: it gives the socket the peer every later call on it is matched
	 * by (a datagram socket connected anew to a matched peer), as the preload's hook does. */
	if (!s->rs->n[var] && !(var == RLT_VAR_CONNECT && s->rs->vars_in_use) &&
	    !(var == RLT_VAR_ACCEPT && s->rs->n[RLT_VAR_CONNS])) {
		answer_continue(s, req.id);
		return;
	}
	fd = (int)a[0];
	p = rlt_sup_proc_of_tid(s, (pid_t)req.pid, &rc);
	k = p ? rlt_sup_fd_facts(s, p, fd, &rc) : NULL;
	if (!k || k == RLT_NOT_SOCKET) {
		if (!k && rc != -EBADF && rc != -ESRCH && rc != -ENOENT)
			rlt_sup_log(s, RLT_LOG_WARN, (pid_t)req.pid,
			            "cannot inspect fd %d of thread %d (%s): let through", fd,
			            (int)req.pid, strerror(-rc));
		answer_continue(s, req.id); /* the fast path: a file, a pipe, a terminal */
		return;
	}
	switch (var) {
	case RLT_VAR_RECV: on_recv(s, &req, p, k); break;
	case RLT_VAR_SEND: on_send(s, &req, p, k); break;
	case RLT_VAR_CONNECT: on_connect(s, &req, p, k); break;
	default:
		if (k->type != SOCK_STREAM) {
			answer_continue(s, req.id);
			break;
		}
		{
			struct rlt_sup_job *j = rlt_sup_job_new(s, &req, p, fd, k, OP_ACCEPT, RLT_VAR_ACCEPT, 0);
			if (!j) {
				rlt_sup_notif_error(s->notify_fd, req.id, ENOMEM);
				break;
			}
			j->flags = nr == SYS_accept4 ? (int)a[3] : 0;
			j->cloexec = (j->flags & SOCK_CLOEXEC) != 0;
			rlt_sup_job_step(s, j);
		}
		break;
	}
}

void rlt_sup_on_notification(struct rlt_sup *s, const struct seccomp_notif *r)
{
	dispatch(s, r);
	/* our duplicates of the sockets it used go, unless a job holds them: kept, they would
	 * keep a connection open after the program closed it */
	rlt_sup_fd_unpin(s);
}
