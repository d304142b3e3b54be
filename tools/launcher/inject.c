/* The injector's run (issue 21, item 3): the command started with the handler's blob in it,
 * and in every later image of it.
 *
 * The launcher forks the command, seizes it with ptrace before its exec, and at the exec stop
 * has the image injected (inject_image.c), which leaves it detached and running.
 *
 * The filter outlives an exec and the handler does not, so the launcher stays: it waits for the
 * command and serves a unix socket on which a thread about to exec asks to be seized
 * (src/inject_proto.h); its new image is injected the same way.
 *
 * Errors are values (struct rlt_cli_inject_err); nothing here prints. */
#include "inject.h"
#include "inject_image.h"
#include "inject_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64

/* A thread seized at its own request, until its exec stop (or its failed exec). */
struct tracee {
	pid_t tid; /* 0: a free slot */
	int fd;    /* its requester's connection, -1 once closed */
};

struct run {
	const struct rlt_cli_inject_opts *o;
	struct rlt_cli_inject_payload pay; /* what each image gets */
	pid_t child;
	int child_done, child_status;
	int none_left; /* no process of the command is left (waitpid: ECHILD) */
	struct tracee t[MAX_CONNS];
	int conn[MAX_CONNS]; /* accepted connections, -1: free */
};

static void logf_(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct run *r, const char *fmt, ...)
{
	char line[400];
	va_list ap;

	if (!r->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	r->o->log(r->o->log_ctx, line);
}
static int wait_for(pid_t pid, int *st)
{
	while (waitpid(pid, st, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}
/* ---- the launcher's loop ----------------------------------------------------------------- */

static int make_socket(struct run *r, struct rlt_cli_inject_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	unsigned long long nonce = 0;
	size_t n;
	int fd;

	if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
		nonce = (unsigned long long)time(NULL) * 2654435761ULL ^ (unsigned long long)getpid();
	snprintf(r->pay.sockname, sizeof r->pay.sockname, "%s%d-%016llx", RLT_INJECT_SOCK_PREFIX,
	         (int)getpid(), nonce);
	n = strlen(r->pay.sockname);
	memcpy(sa.sun_path + 1, r->pay.sockname, n);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un,
	                                                                   sun_path) + 1 + n)) != 0 ||
	    listen(fd, 16) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return rlt_cli_inject_seterr(err, -e, "cannot make the exec socket: %s", strerror(e));
	}
	return fd;
}

static struct tracee *find_tracee(struct run *r, pid_t tid)
{
	int i;

	for (i = 0; i < MAX_CONNS; i++)
		if (r->t[i].tid == tid && tid)
			return &r->t[i];
	return NULL;
}

static void reply(int fd, int32_t tid, int32_t status)
{
	struct rlt_inject_msg m = {RLT_INJECT_MAGIC, RLT_INJECT_REPLY, tid, status};

	if (fd >= 0)
		send(fd, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The thread group of tid, from /proc; 0 if it is gone. */
static pid_t tgid_of(pid_t tid)
{
	char path[48], line[128];
	pid_t tg = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %d", &tg) == 1)
			break;
	fclose(f);
	return tg;
}

static void on_attach(struct run *r, int fd, const struct rlt_inject_msg *m)
{
	struct ucred cr;
	socklen_t cl = sizeof cr;
	int i;

	/* only a thread of the process that asks, of our own user */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.uid != getuid() ||
	    m->tid <= 0 || tgid_of(m->tid) != cr.pid) {
		reply(fd, m->tid, -EPERM);
		return;
	}
	for (i = 0; i < MAX_CONNS && r->t[i].tid; i++)
		;
	if (i == MAX_CONNS || find_tracee(r, m->tid)) {
		reply(fd, m->tid, -EBUSY);
		return;
	}
	if (ptrace(PTRACE_SEIZE, m->tid, 0, (void *)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) != 0) {
		int e = errno;
		logf_(r, "cannot attach to %d before its exec: %s", (int)m->tid, strerror(e));
		reply(fd, m->tid, -e);
		return;
	}
	r->t[i].tid = m->tid;
	r->t[i].fd = fd;
	reply(fd, m->tid, 0);
}

/* The exec of t failed: stop it, detach, say so. */
static void on_exec_failed(struct tracee *t)
{
	int st, i, sig = 0;

	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0) {
		for (i = 0; i < RLT_CLI_INJECT_MAX_STOPS; i++) {
			if (wait_for(t->tid, &st) != 0 || !WIFSTOPPED(st))
				break;
			if ((st >> 16) == PTRACE_EVENT_STOP)
				break;
			if ((st >> 16) == 0) {
				sig = WSTOPSIG(st);
				break; /* detach delivers it */
			}
			ptrace(PTRACE_CONT, t->tid, 0, 0);
		}
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig);
	}
	reply(t->fd, t->tid, 0);
	t->tid = 0;
}

static void on_message(struct run *r, int slot)
{
	int fd = r->conn[slot], i;
	struct rlt_inject_msg m;
	ssize_t n = recv(fd, &m, sizeof m, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == (ssize_t)sizeof m && m.magic == RLT_INJECT_MAGIC) {
		struct tracee *t = find_tracee(r, m.tid);
		if (m.op == RLT_INJECT_ATTACH) {
			on_attach(r, fd, &m);
			return;
		}
		if (m.op == RLT_INJECT_EXEC_FAILED && t && t->fd == fd) {
			on_exec_failed(t);
			return;
		}
	}
	/* end of the connection (a successful exec closes it), or nonsense */
	for (i = 0; i < MAX_CONNS; i++)
		if (r->t[i].tid && r->t[i].fd == fd)
			r->t[i].fd = -1;
	close(fd);
	r->conn[slot] = -1;
}

static void on_stop(struct run *r, pid_t pid, int st)
{
	int ev = st >> 16;
	struct rlt_cli_inject_err err;

	if (ev == PTRACE_EVENT_EXEC) {
		unsigned long former = 0;
		struct tracee *t;
		ptrace(PTRACE_GETEVENTMSG, pid, 0, &former);
		/* a thread that is not its group's leader execs under the leader's id */
		t = find_tracee(r, (pid_t)former);
		if (!t)
			t = find_tracee(r, pid);
		if (rlt_cli_inject_image(&r->pay, pid, 0, NULL, 0, &err) != 0) {
			logf_(r, "process %d: %s; killing it", (int)pid, err.msg);
			kill(pid, SIGKILL);
		}
		if (t) {
			if (t->fd >= 0)
				reply(t->fd, pid, 0);
			t->tid = 0;
		}
		return;
	}
	if (ev == PTRACE_EVENT_STOP) {
		/* a group stop (SIGSTOP and such): the thread stays stopped as without us */
		if (ptrace(PTRACE_LISTEN, pid, 0, 0) != 0)
			ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
	/* a signal for the program: it gets it */
	ptrace(PTRACE_CONT, pid, 0, (void *)(long)(ev ? 0 : WSTOPSIG(st)));
}

static void reap(struct run *r)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
		if (WIFSTOPPED(st)) {
			on_stop(r, p, st);
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			struct tracee *t = find_tracee(r, p);
			if (t)
				t->tid = 0;
			if (p == r->child) {
				r->child_done = 1;
				r->child_status = st;
			}
		}
	}
	if (p < 0 && errno == ECHILD)
		r->none_left = 1;
}

/* Starts the command seized before its exec; returns at its exec stop. */
static int start_child(struct run *r, const sigset_t *oldmask, struct rlt_cli_inject_err *err)
{
	int sync_p[2], err_p[2], st, e, i, rc;
	char go = 'g';

	if (pipe2(sync_p, O_CLOEXEC) != 0)
		return rlt_cli_inject_seterr(err, -errno, "cannot make a pipe: %s", strerror(errno));
	if (pipe2(err_p, O_CLOEXEC) != 0) {
		e = errno;
		close(sync_p[0]);
		close(sync_p[1]);
		return rlt_cli_inject_seterr(err, -e, "cannot make a pipe: %s", strerror(e));
	}
	r->child = fork();
	if (r->child < 0) {
		e = errno;
		close(sync_p[0]);
		close(sync_p[1]);
		close(err_p[0]);
		close(err_p[1]);
		return rlt_cli_inject_seterr(err, -e, "cannot fork: %s", strerror(e));
	}
	if (r->child == 0) {
		/* Waits on a pipe rather than stopping itself: the parent seizes a running process,
		 * and no group stop needs untangling. No new privileges: the filter needs it. */
		ssize_t n;
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		close(sync_p[1]);
		close(err_p[0]);
		e = 0;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			e = errno;
		while ((n = read(sync_p[0], &go, 1)) < 0 && errno == EINTR)
			;
		if (n == 1 && !e) {
			execvp(r->o->argv[0], r->o->argv);
			e = errno;
		}
		if (write(err_p[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(sync_p[0]);
	close(err_p[1]);
	if (ptrace(PTRACE_SEIZE, r->child, 0, (void *)(PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) != 0) {
		e = errno;
		close(sync_p[1]);
		close(err_p[0]);
		kill(r->child, SIGKILL);
		wait_for(r->child, &st);
		return rlt_cli_inject_seterr(err, -e, "ptrace is not allowed here (PTRACE_SEIZE: %s)",
		                             strerror(e));
	}
	rc = write(sync_p[1], &go, 1) == 1 ? 0 : -errno;
	close(sync_p[1]);
	for (i = 0; rc == 0; i++) {
		if ((rc = wait_for(r->child, &st)) != 0)
			break;
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_EXEC) {
			close(err_p[0]);
			return 0;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			e = 0;
			if (read(err_p[0], &e, sizeof e) != sizeof e)
				e = 0;
			close(err_p[0]);
			r->child = 0;
			if (e)
				return rlt_cli_inject_seterr(err, -e, "cannot run %s: %s", r->o->argv[0], strerror(e));
			return rlt_cli_inject_seterr(err, -ECHILD, "the command ended before its exec");
		}
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, r->child, 0,
			       (void *)(long)((st >> 16) ? 0 : WSTOPSIG(st)));
	}
	close(err_p[0]);
	kill(r->child, SIGKILL);
	wait_for(r->child, &st);
	r->child = 0;
	return rlt_cli_inject_seterr(err, rc, "cannot start the command: %s", strerror(-rc));
}

/* The signals for the launcher, read from the signalfd: each goes to the command. */
static void on_signals(struct run *r, int sfd)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (!r->child_done)
			kill(r->child, (int)si.ssi_signo);
		else
			r->none_left = 1; /* told to go: later execs fail EPERM */
	}
}

/* New connections on the exec socket, each in a free slot (closed when there is none). */
static void on_accept(struct run *r, int lfd)
{
	int c, k;

	while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		for (k = 0; k < MAX_CONNS && r->conn[k] >= 0; k++)
			;
		if (k == MAX_CONNS)
			close(c);
		else
			r->conn[k] = c;
	}
}

/* The command's processes outlive its first one (a shell's background job): each may still
 * exec, and an exec nobody injects fails. So the launcher serves until none is left; as the
 * command's subreaper, every orphan of it is our child, and waitpid's ECHILD says when the last
 * one has ended. */
static void serve(struct run *r, int sfd, int lfd)
{
	int i;

	while (!r->none_left) {
		struct pollfd p[2 + MAX_CONNS];
		int n = 0, slot[2 + MAX_CONNS];
		p[n].fd = sfd, p[n].events = POLLIN, slot[n++] = -1;
		p[n].fd = lfd, p[n].events = POLLIN, slot[n++] = -2;
		for (i = 0; i < MAX_CONNS; i++)
			if (r->conn[i] >= 0)
				p[n].fd = r->conn[i], p[n].events = POLLIN, slot[n++] = i;
		if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (slot[i] == -1)
				on_signals(r, sfd);
			else if (slot[i] == -2)
				on_accept(r, lfd);
			else
				on_message(r, slot[i]);
		}
		reap(r);
	}
	for (i = 0; i < MAX_CONNS; i++)
		if (r->conn[i] >= 0)
			close(r->conn[i]);
}

int rlt_cli_inject_run(const struct rlt_cli_inject_opts *o, int *status,
                       struct rlt_cli_inject_err *err)
{
	static struct run r; /* one command per launcher */
	sigset_t sigs, old;
	int lfd, sfd = -1, i, st;

	memset(&r, 0, sizeof r);
	r.o = o;
	for (i = 0; i < MAX_CONNS; i++)
		r.conn[i] = -1;
	if (!o->argv || !o->argv[0])
		return rlt_cli_inject_seterr(err, -EINVAL, "no command to run");
	if (rlt_cli_inject_parse_blob(o->blob, o->blob_len, &r.pay.blob, err) != 0)
		return -1;
	if (sizeof(struct rlt_inject_hdr) + o->config_len > UINT32_MAX)
		return rlt_cli_inject_seterr(err, -E2BIG, "the config block is too large");
	r.pay.config = o->config;
	r.pay.config_len = o->config_len;
	if ((lfd = make_socket(&r, err)) < 0)
		return -1;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (start_child(&r, &old, err) != 0)
		goto fail;
	if (rlt_cli_inject_image(&r.pay, r.child, RLT_INJECT_FIRST, o->readback, o->readback_len,
	                         err) != 0) {
		kill(r.child, SIGKILL);
		wait_for(r.child, &st);
		goto fail;
	}
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		rlt_cli_inject_seterr(err, -errno, "cannot make a signalfd: %s", strerror(errno));
		kill(r.child, SIGKILL);
		wait_for(r.child, &st);
		goto fail;
	}
	reap(&r); /* a SIGCHLD of the injection is consumed already */
	serve(&r, sfd, lfd);
	close(sfd);
	close(lfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	st = r.child_status;
	*status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	return 0;
fail:
	close(lfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return -1;
}
