/*
 * supervisor.c: --seccomp, the launcher as a seccomp supervisor (rlthrottle(7) DESCRIPTION, §5; issue 5): the
 * run (setup, the end, the exit status). rlt_sup_run (supervisor.h) is all the launcher sees.
 *
 * In short: the child installs a filter that hands the network calls (and no other) to us;
 * a lane thread receives them and answers at once what no rule limits; a call that must
 * wait or be made in pieces becomes a job, moved on by an epoll loop and a timer heap, never
 * blocking; budgets are the preload's own (src/). The files:
 *   filter.c          the child: the seccomp filter, the listener handed over, the exec
 *   keeper.c          the keeper: the command's tree dies with the supervisor
 *   notify_loop.c     the lane (NOTIF_RECV) and the epoll loop
 *   notif_dispatch.c  what a notification becomes: an answer now, or a job
 *   job_table.c       the jobs' life: new, step, end; their waits and charge; the tick
 *   job_conns.c       RLT_CONNS scheduled (rlt__conns_try decides); connect (charge, slot, CONTINUE)
 *   job_stream.c      stream receive and send, sendfile: made by us, piece by piece
 *   job_splice.c      splice between the program's pipe and a stream
 *   job_dgram.c       datagram receive: measured, charged whole
 *   job_accept.c      accept made by us, the fd installed in the program
 *   job_signals.c     a held call ends for its thread's signal handler
 *   proc_table.c      the program's processes and threads
 *   fd_facts.c        what each (process, fd) is, checked where used; the RLT_CONNS sweep
 *   timer_heap.c      jobs by deadline
 *   target_mem.c      the program's memory, its fds, the answers to the kernel
 *   internal.h        what these files share (names: rlt_sup_)
 *
 * The design (what each call costs, which calls we make for the program and why, signals,
 * the fd tables, failure cases, the end, the bounds) is in docs/DESIGN.md, "The supervisor".
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "conns.h"
#include "ruleset_env.h"
#include "settings.h"
#include "publish.h"
#include "stats.h"
#include "internal.h"
#include "supervisor.h"

static int log_level = RLT_LOG_WARN;
static pid_t log_pid;

static void vsay(int upto, int level, pid_t pid, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static void vsay(int upto, int level, pid_t pid, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;

	if (level > upto)
		return;
	n = rlt__log_line(line, sizeof line, pid ? pid : log_pid, fmt, ap);
	if (write(2, line, n) < 0)
		return;
}

void rlt_sup_log(const struct rlt_sup *s, int level, pid_t pid, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(s ? s->loglevel : log_level, level, pid, fmt, ap);
	va_end(ap);
}

/* The core's sink (rules left out, the rules in force, a Redis outage): the supervisor's
 * stderr, in the name of the command. The Redis calls are the supervisor's own, made on the
 * lane or the loop; write(2) is safe from either. */
static void core_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void core_log(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(log_level, level, 0, fmt, ap);
	va_end(ap);
}

static int fail(const char *msg)
{
	fprintf(stderr, "rlthrottle: %s\n", msg);
	return RLT_EXIT_OWN;
}

static void write_stats(struct rlt__ruleset *rs, const char *tmpl, pid_t pid, rlt_ns_t elapsed)
{
	struct rlt_error err;

	if (rlt__stats_to(tmpl, rs, write, close, pid, elapsed, &err) != 0)
		rlt_sup_log(NULL, RLT_LOG_ERROR, pid, "%s", err.msg);
}

/* Each socket of the command costs us one duplicate: take all the fds we may. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* Linux 6.6+: the program's thread and the supervisor hand the CPU to each other instead of
 * waking one another on another CPU, which is most of a notification's cost on a small or
 * virtual machine. Older kernels say EINVAL: then wake-ups are ordinary. */
static void sync_wakeups(int notify_fd)
{
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0)
		rlt_sup_log(NULL, RLT_LOG_DEBUG, 0, "no synchronous wake-ups: %s", strerror(errno));
}

int rlt_sup_run(char **cmd)
{
	static struct rlt__ruleset rs; /* large: the rules with their counters */
	static struct rlt_sup s;
	struct rlt__settings set;
	struct rlt_error err = {{0}};
	char msg[700];
	int ctl = -1, child_pidfd = -1, sig_fd = -1, status = 0, rc;
	sigset_t sigs;
	pid_t pid;
	rlt_ns_t started = rlt__now();

	log_pid = getpid(); /* the command's pid once it runs */
	if (rlt__settings_read(&set, &err) != 0)
		return fail(err.msg);
	if (!set.inherit)
		return fail(RLT_SECCOMP_NO_INHERIT);
	log_level = set.loglevel;
	if (rlt__ruleset_from_env(&rs, &set, core_log, &err) != 0)
		return fail(err.msg);
	raise_fd_limit();

	rc = rlt_sup_child_spawn(cmd, &pid, &s.notify_fd, &ctl, &err);
	if (rc)
		return fail(err.msg);
	/* only now: an ignored SIGPIPE is inherited, and the command must die of a write into a
	 * pipe whose reader has gone (`yes | head`) as it would without us */
	signal(SIGPIPE, SIG_IGN);
	/* before the command runs, and before the lane thread: the keeper is forked from a
	 * process of one thread */
	if (rlt_sup_keeper_start(s.notify_fd, &err) != 0) {
		rlt_sup_child_abort(pid, ctl);
		return fail(err.msg);
	}
	rlt_sup_keeper_add(pid);
	log_pid = pid;
	/* the command's page (rlthrottle(1) COMMANDS): its forks get theirs in proc_table.c */
	if (set.publish && rlt__pub_create(&rs, pid, 1, &err) != 0)
		rlt_sup_log(NULL, RLT_LOG_INFO, pid, "%s (running unpublished)", err.msg);
	sync_wakeups(s.notify_fd);
	s.rs = &rs;
	s.loglevel = log_level;
	s.child = pid;
	s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	s.tee_pipe[0] = s.tee_pipe[1] = -1; /* made on the first splice */
	child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) == 0)
		sig_fd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s.epoll_fd < 0 || s.timer_fd < 0 || child_pidfd < 0 || sig_fd < 0) {
		snprintf(msg, sizeof msg, "--seccomp: cannot set up the supervisor: %s",
		         strerror(errno));
		rlt_sup_child_abort(pid, ctl);
		rlt_sup_keeper_stop();
		return fail(msg);
	}
	rlt__ruleset_log(&rs, core_log, " (seccomp supervisor)");
	if (rlt_sup_child_go(ctl) != 0) {
		snprintf(msg, sizeof msg, "--seccomp: the command did not start: %s", strerror(errno));
		rlt_sup_child_abort(pid, -1);
		rlt_sup_keeper_stop();
		return fail(msg);
	}

	rc = rlt_sup_notify_loop(&s, child_pidfd, sig_fd, &status, &err);
	if (rc) {
		/* Without us the command's notified calls fail with ENOSYS: stop it rather than
		 * leave it running broken. */
		rlt_sup_log(&s, RLT_LOG_ERROR, pid, "%s; stopping the command", err.msg);
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		/* the keeper stays: once we are gone it kills what is left of the tree */
	} else {
		rlt_sup_keeper_stop(); /* no task of the command is left */
	}
	rlt_sup_log(&s, RLT_LOG_DEBUG, pid, "%llu notifications, %llu answered at once",
	            (unsigned long long)s.notifications, (unsigned long long)s.continued_fast);
	rlt_sup_procs_free(&s); /* first: each process's statistics join the summary */
	if (set.stats[0])
		write_stats(&rs, set.stats, pid, rlt__now() - started);
	rlt__pub_destroy(&rs);
	if (rc)
		return RLT_EXIT_OWN;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
