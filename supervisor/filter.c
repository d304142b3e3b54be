/*
 * filter.c: starting the command under the filter.
 *
 * The child installs a libseccomp filter whose network and fd-table system calls go to user
 * notification, and hands the listener fd to the parent over a socketpair (SCM_RIGHTS). The
 * catch: once the filter is in force, the child's own sendmsg() is a notified call, and nobody
 * listens yet. A seccomp filter applies to the thread that installs it (without TSYNC), so the
 * child starts a helper thread *before* installing it: the helper is not filtered, sends the
 * fd, and waits for the parent's go-ahead; the main thread waits for the helper with
 * pthread_join (a futex, not notified), then closes its ends and execs, neither notified; the
 * parent supervises from the go-ahead on.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/* What the child reports before exec: 0 and the listener fd, or an errno and where it failed. */
struct report {
	int err;
	char what[200];
};

/* Calls whose effect on the data path we throttle, and no other: a notified call can fail with
 * EINTR before we receive it, which close() must not (see fd_facts.c for how the fd cache
 * stays true without seeing close, dup2, dup3, close_range or execve). */
static const char *const notified[] = {
	"connect", "accept", "accept4", "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg",
	"recvmmsg", "read", "write", "readv", "writev", "sendfile", "splice",
};

struct helper {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ready;
	int ctl;
	int notify_fd;
	struct report rep;
};

static int send_report(int ctl, const struct report *rep, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {(void *)rep, sizeof *rep};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};

	memset(cbuf, 0, sizeof cbuf);
	if (fd >= 0) {
		m.msg_control = cbuf;
		m.msg_controllen = sizeof cbuf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	return sendmsg(ctl, &m, MSG_NOSIGNAL) == (ssize_t)sizeof *rep ? 0 : -1;
}

/* The unfiltered thread: waits for the main thread's result, sends it, waits for the go. */
static void *helper_main(void *arg)
{
	struct helper *h = arg;
	char go = 0;

	pthread_mutex_lock(&h->mu);
	while (!h->ready)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	if (send_report(h->ctl, &h->rep, h->rep.err ? -1 : h->notify_fd) != 0)
		return (void *)1;
	if (h->rep.err)
		return (void *)1;
	if (read(h->ctl, &go, 1) != 1 || go != 'g')
		return (void *)1;
	return NULL;
}

/* What we ask of the kernel: a listener, and a thread whose call we received cannot leave it
 * but by death (Linux 5.19). Without the second, a signal takes the call away from us in the
 * middle of a send we make in pieces, and the kernel restarts it as a new call. */
#define FILTER_FLAGS (SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)

/* Loads the filter built in ctx with FILTER_FLAGS (libseccomp 2.5 cannot set the second): its
 * BPF program is exported to a memfd and handed to seccomp() ourselves. The listener or
 * -errno. */
static int load_filter(scmp_filter_ctx ctx, char *what, size_t wlen)
{
	struct sock_fprog prog;
	struct sock_filter *insns = NULL;
	int mfd = memfd_create("rlthrottle-bpf", MFD_CLOEXEC), rc;
	off_t len;

	if (mfd < 0) {
		snprintf(what, wlen, "memfd_create");
		return -errno;
	}
	rc = seccomp_export_bpf(ctx, mfd);
	if (rc) {
		snprintf(what, wlen, "exporting the seccomp filter");
		goto out;
	}
	len = lseek(mfd, 0, SEEK_END);
	if (len <= 0 || len % (off_t)sizeof *insns || len / (off_t)sizeof *insns > BPF_MAXINSNS ||
	    !(insns = malloc((size_t)len)) || pread(mfd, insns, (size_t)len, 0) != len) {
		snprintf(what, wlen, "reading the exported seccomp filter");
		rc = -EIO;
		goto out;
	}
	/* closed first: once the filter is in force, close is a call nobody answers yet */
	close(mfd);
	mfd = -1;
	prog.len = (unsigned short)(len / (off_t)sizeof *insns);
	prog.filter = insns;
	rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, FILTER_FLAGS, &prog);
	if (rc < 0) {
		rc = -errno;
		snprintf(what, wlen, "loading the seccomp filter");
	}
out:
	free(insns);
	if (mfd >= 0)
		close(mfd);
	return rc;
}

/* Builds and loads the filter in the calling thread. 0 and *nfd, or -errno with what. */
static int install(int *nfd, char *what, size_t wlen)
{
	scmp_filter_ctx ctx;
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		snprintf(what, wlen, "prctl(PR_SET_NO_NEW_PRIVS)");
		return -errno;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(what, wlen, "seccomp_init");
		return -ENOMEM;
	}
	for (size_t i = 0; i < sizeof notified / sizeof notified[0]; i++) {
		int nr = seccomp_syscall_resolve_name(notified[i]);
		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture (e.g. close_range on an old kernel header) */
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
		if (rc) {
			snprintf(what, wlen, "a notify rule for %s", notified[i]);
			goto out;
		}
	}
	/* io_uring moves data with no system call we could see: a program that finds it missing
	 * falls back to read/write/send/recv (as on kernels and containers without it). */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(io_uring_setup), 0);
	if (rc) {
		snprintf(what, wlen, "the io_uring_setup rule");
		goto out;
	}
	rc = load_filter(ctx, what, wlen);
	if (rc < 0)
		goto out;
	*nfd = rc;
	rc = 0;
out:
	seccomp_release(ctx);
	return rc;
}

static void child(char **cmd, int ctl)
{
	static struct helper h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, -1,
	                          {0, ""}};
	pthread_t t;
	void *res = NULL;
	int nfd = -1, rc;
	pid_t parent = getppid();

	h.ctl = ctl;
	if (pthread_create(&t, NULL, helper_main, &h) != 0) {
		struct report rep = {EAGAIN, "starting a thread in the child"};
		send_report(ctl, &rep, -1);
		_exit(RLT_EXIT_OWN);
	}
	rc = install(&nfd, h.rep.what, sizeof h.rep.what);
	pthread_mutex_lock(&h.mu);
	h.rep.err = rc < 0 ? -rc : 0;
	h.notify_fd = nfd;
	h.ready = 1;
	pthread_cond_signal(&h.cv);
	pthread_mutex_unlock(&h.mu);
	pthread_join(t, &res);
	if (rc < 0 || res != NULL)
		_exit(RLT_EXIT_OWN); /* the parent says why */
	/* From here on every notified call of ours is answered by the parent. */
	close(nfd);
	close(ctl);
	/* The first defence against the supervisor's death (the keeper is the second, for the
	 * whole tree): it fires when the thread that forked us ends, and that thread is the
	 * supervisor's main thread, which lives until the end. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(RLT_EXIT_OWN); /* it died before the line above */
	execvp(cmd[0], cmd);
	fprintf(stderr, "rlthrottle: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? RLT_EXIT_NOTFOUND : RLT_EXIT_CANNOT_RUN);
}

static int recv_report(int ctl, struct report *rep, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {rep, sizeof *rep};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
	                   .msg_controllen = sizeof cbuf};
	struct pollfd pfd = {ctl, POLLIN, 0};
	ssize_t n;

	*fd = -1;
	/* The child reports within milliseconds; 10 s means it is stuck. */
	if (poll(&pfd, 1, 10000) != 1)
		return -ETIMEDOUT;
	n = recvmsg(ctl, &m, MSG_CMSG_CLOEXEC);
	if (n != (ssize_t)sizeof *rep)
		return n < 0 ? -errno : -EPIPE;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof *fd);
	rep->what[sizeof rep->what - 1] = '\0';
	return 0;
}

void rlt_sup_child_abort(pid_t pid, int ctl_fd)
{
	int st;

	kill(pid, SIGKILL);
	if (ctl_fd >= 0)
		close(ctl_fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* Asks the kernel whether it can notify at all, and keep a call it handed us (a filter
 * with FILTER_FLAGS: a null program is refused for its address, EFAULT, only once the flags
 * are known), so that the failure says which case it is. */
static int probe_kernel(struct rlt_error *err)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;
	int e = 0;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0)
		e = errno;
	else if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, FILTER_FLAGS, NULL) == 0 ||
	         errno != EINVAL)
		return 0;
	if (!e) {
		snprintf(err->msg, sizeof err->msg,
		         "--seccomp needs Linux 5.19 or newer (the kernel refused "
		         "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: %s)", strerror(EINVAL));
		return -EINVAL;
	}
	snprintf(err->msg, sizeof err->msg, "--seccomp cannot work here: %s (seccomp: %s)",
	         e == ENOSYS ? "the kernel has no seccomp filters"
	         : e == EOPNOTSUPP ? "the kernel has no seccomp user notification (Linux >= 5.5 needed)"
	         : e == EPERM || e == EACCES ? "seccomp is forbidden here (a container profile or "
	                                       "an outer filter)"
	         : "seccomp does not answer",
	         strerror(e));
	return -e;
}

int rlt_sup_child_spawn(char **cmd, pid_t *pid, int *notify_fd, int *ctl_fd, struct rlt_error *err)
{
	struct report rep;
	int sp[2], rc, fd;
	pid_t p;

	rc = probe_kernel(err);
	if (rc)
		return rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
		rc = -errno;
		snprintf(err->msg, sizeof err->msg, "socketpair: %s", strerror(-rc));
		return rc;
	}
	fflush(NULL);
	p = fork();
	if (p < 0) {
		rc = -errno;
		close(sp[0]);
		close(sp[1]);
		snprintf(err->msg, sizeof err->msg, "fork: %s", strerror(-rc));
		return rc;
	}
	if (p == 0) {
		close(sp[0]);
		child(cmd, sp[1]);
	}
	close(sp[1]);
	rc = recv_report(sp[0], &rep, &fd);
	if (rc == 0 && rep.err)
		rc = -rep.err;
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc) {
		if (rep.err)
			snprintf(err->msg, sizeof err->msg,
			         "--seccomp cannot work here: %s failed: %s%s", rep.what,
			         strerror(rep.err),
			         rep.err == ENOSYS || rep.err == EINVAL || rep.err == EOPNOTSUPP
			                 ? " (a kernel without seccomp user notification?)"
			                 : rep.err == EPERM || rep.err == EACCES
			                           ? " (seccomp is forbidden here, e.g. by a container)"
			                           : "");
		else
			snprintf(err->msg, sizeof err->msg,
			         "--seccomp cannot work here: the child did not hand over the "
			         "filter's fd: %s", strerror(-rc));
		rlt_sup_child_abort(p, sp[0]);
		return rc;
	}
	/* pidfd_getfd is what every call on a socket needs: try it now on the child's end of the
	 * socketpair (the same fd number as ours was), before the command runs. */
	int pidfd = (int)syscall(SYS_pidfd_open, p, 0);
	int probe = pidfd < 0 ? -errno : rlt_sup_getfd(pidfd, sp[1]);
	if (pidfd >= 0)
		close(pidfd);
	if (probe < 0) {
		snprintf(err->msg, sizeof err->msg,
		         "--seccomp cannot work here: taking the command's fds with pidfd_getfd "
		         "failed: %s%s",
		         strerror(-probe),
		         probe == -EPERM ? " (ptrace is restricted here: kernel.yama.ptrace_scope or "
		                           "a container's seccomp profile)"
		                         : probe == -ENOSYS ? " (the kernel is older than 5.6)" : "");
		close(fd);
		rlt_sup_child_abort(p, sp[0]);
		return probe;
	}
	close(probe);
	*pid = p;
	*notify_fd = fd;
	*ctl_fd = sp[0];
	return 0;
}

int rlt_sup_child_go(int ctl_fd)
{
	char go = 'g';
	ssize_t n = write(ctl_fd, &go, 1);

	close(ctl_fd);
	return n == 1 ? 0 : -errno;
}
