/*
 * supervisor.c: --seccomp, the launcher as a seccomp supervisor (SPEC §1, §5; issue 5): the
 * run (setup, the end, the exit status). rlt_sup_run (supervisor.h) is all the launcher sees.
 *
 * In short: the child installs a filter that hands the network calls (and the calls that
 * release fds) to us; a lane thread receives them and answers at once what no rule limits; a
 * call that must wait or be made in pieces becomes a job, moved on by an epoll loop and a
 * timer heap, never blocking; budgets are the preload's own (src/). The files:
 *   filter.c          the child: the seccomp filter, the listener handed over, the exec
 *   keeper.c          the keeper: the command's tree dies with the supervisor
 *   notify_loop.c     the lane (NOTIF_RECV) and the epoll loop
 *   notif_dispatch.c  what a notification becomes: an answer now, or a job
 *   job_table.c       the jobs' life: new, step, end; their waits and charge; the tick
 *   job_conns.c       RLT_CONNS slots without blocking; connect (charge, slot, CONTINUE)
 *   job_stream.c      stream receive and send, sendfile: made by us, piece by piece
 *   job_splice.c      splice between the program's pipe and a stream
 *   job_dgram.c       datagram receive: measured, charged whole
 *   job_accept.c      accept made by us, the fd installed in the program
 *   job_signals.c     a held call ends for its thread's signal handler
 *   proc_table.c      the program's processes and threads
 *   fd_facts.c        what each (process, fd) is, kept true
 *   timer_heap.c      jobs by deadline
 *   target_mem.c      the program's memory, its fds, the answers to the kernel
 *   internal.h        what these files share (names: rlt_sup_)
 *
 * DESIGN NOTE
 *
 * Shape. The launcher forks; the child builds with libseccomp, and loads itself with
 * WAIT_KILLABLE_RECV (see Signals), a filter (filter.c) that sends
 * connect, accept, accept4, the send and receive calls (sendto, sendmsg, sendmmsg, recvfrom,
 * recvmsg, recvmmsg, read, write, readv, writev, sendfile, splice) and the calls that release or
 * replace fd numbers (close, dup2, dup3, close_range, execve, execveat) to user notification,
 * passes the listener to us over a socketpair (SCM_RIGHTS), waits for our go-ahead and execs
 * the command. Threads and children of the command inherit the filter. We decide with the
 * preload's own policy (rlt__ruleset_build over the same variables, rlt__match, rlt__charge,
 * rlt__settle) and write the same RLT_STATS summary at the end: one for the whole command,
 * under the command's pid. Each process has budgets of its own (SPEC §4): the first a
 * process is seen, its nearest supervised ancestor's are copied (rlt__ruleset_fork); at its
 * end its statistics join the command's (rlt__ruleset_join). RLT_CONNS stays one count for
 * the command, as the supervisor holds its slots per call and socket, not per process.
 *
 * Two threads under one lock, no blocking call. The lane (notify_loop.c) sleeps in
 * NOTIF_RECV only: a thread blocked there is woken on the calling thread's CPU (Linux 6.6
 * SYNC_WAKE_UP), so a notification costs two context switches and nothing more, about what
 * a pipe ping-pong costs (test_seccomp_fileread prints both). The loop sleeps in epoll_wait
 * only, on: the listener's hang-up, a timerfd armed for the earliest due job of a timer heap
 * (timer_heap.c), the command's pidfd, a signalfd, each supervised process's pidfd (its
 * exit), and our duplicates of sockets that calls are waiting on. Both handle what woke them
 * under the lock, so the state is never touched by two at once; an ended job is freed only
 * after the loop's next batch, as the loop may hold an event for it harvested before the
 * lane ended it. A call that must wait becomes a job; many jobs wait at once without
 * holding each other up. We chose non-blocking duplicates plus epoll over a worker pool: a
 * blocked worker cannot be taken back when the call must end for a signal, and a pool is
 * either too small for a program with many blocked readers or too large.
 * Calls made for the program use MSG_DONTWAIT on the duplicate (a per-call flag: the file's
 * O_NONBLOCK is shared with the program and is not ours to change), after epoll said ready.
 *
 * What each call costs. A call on a file, pipe or terminal (or a socket no rule matches, or any
 * call of a kind no rule limits) is answered CONTINUE after two look-ups: thread -> process
 * and (process, fd) -> facts (proc_table.c, fd_facts.c). That is the fast path (see
 * tests/bench/seccomp.sh).
 *
 * Bytes exactly. CONTINUE cannot shorten a call, so:
 *  - A stream receive with a RECV rule is always made by us: piece = min(len, the rule's
 *    piece), charge it, wait for the slot, recv(MSG_DONTWAIT) on our duplicate, write the
 *    data into the program's buffer (process_vm_writev, iovecs too), answer with the count,
 *    and give back the unused part of the charge. A program is never handed more than it was
 *    charged. MSG_WAITALL goes on piece after piece until the length is filled (or EOF).
 *    MSG_PEEK goes through uncharged. recvfrom/recvmsg on a stream get address length 0,
 *    no ancillary data, flags 0, as TCP gives. A recvmsg with room for ancillary data on a
 *    unix socket (fds in flight must land in the program, not in us) is made by the kernel
 *    and charged its whole room before.
 *  - A stream send that can go whole (rlt__whole: blocking and within the burst and what the
 *    rate gives within a max-wait, or non-blocking and within one piece; sendmsg with
 *    ancillary data and sendmmsg whatever their size, below) is charged whole and
 *    CONTINUEd: the kernel makes it in one call, so threads sharing the socket do not tear
 *    each other's records. Bound: if that call then sends less (a short write on a blocking
 *    socket, which Linux does only on a signal, or EAGAIN), the unused part is not given
 *    back: at most what can go whole per such call. A non-blocking send to a socket with no
 *    room (poll) is let through uncharged: it gets EAGAIN.
 *  - A larger stream send is made by us, piece by piece: read the program's bytes
 *    (process_vm_readv), check the notification is still valid (TOCTOU: we act only on what
 *    the live call asked), send(MSG_DONTWAIT|MSG_NOSIGNAL), next piece; the answer is the
 *    count once all has gone (blocking) or what the budget allowed now, one piece at least
 *    (non-blocking). EPIPE raises SIGPIPE in the thread unless it asked MSG_NOSIGNAL.
 *  - Datagrams are never split: a send is charged whole, then CONTINUEd; a receive first
 *    learns the next datagram's size and sender (MSG_PEEK|MSG_TRUNC on our duplicate, waiting
 *    for one on epoll if the call blocks), is charged that, and CONTINUEd. Bound: another
 *    thread may take that datagram first; the call then gets (and is charged for) the next.
 *    A datagram refused by a reject rule is dropped, as a policer drops a packet.
 *  - sendfile to a stream is made by us, as a send in pieces whose bytes come from our
 *    duplicate of the program's file (pread at our offset, then the program's offset written
 *    back, or its file position moved on with lseek, as the kernel does): servers send whole
 *    files in one call (busybox httpd asks for 2^63 bytes), which charged whole would be one
 *    burst of the file, or a reject. CONTINUE is not possible for it: it cannot be shortened.
 *  - splice between a pipe and a stream socket is made by us, one piece a call (see
 *    job_splice.c: tee to look at the pipe, send, then take out of the pipe what went; or recv
 *    no more than the pipe has room for, then write). recvmmsg on a stream is made by us into
 *    its first message and answered 1.
 *  - sendmmsg, sendmsg with ancillary data and sendfile from a pipe (no offset to read at) are
 *    charged whole and CONTINUEd (a burst of at most their size); recvmmsg on datagrams is
 *    charged its first datagram only. These are the known bounds of this version.
 *  - connect is charged before (the attempt is what the rule counts), then CONTINUEd;
 *    RLT_CONNS takes a slot before it and holds it until the fd is closed (a connect that
 *    fails holds it until the program closes the socket: we do not see the outcome). A later
 *    connect() on the same socket that only asks how its attempt went (EALREADY, EISCONN) is
 *    neither charged nor given a slot: the socket's TCP state says which it is
 *    (rlt__connect_starts, on our duplicate).
 *  - accept is made by us when the listener is readable (so that rules see the peer, and a
 *    shed connection is taken off the queue and closed), charged after, and installed in the
 *    program with SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND (kernel 5.14), which also
 *    answers the call with the new fd number. Bound: if a process outside the command shares
 *    the listener and takes the connection between our poll and our accept4, a blocking
 *    listener blocks the supervisor until the next connection.
 *
 * O_NONBLOCK and MSG_DONTWAIT. Read per call with fcntl(F_GETFL) on the duplicate (the
 * program may change it with fcntl or ioctl(FIONBIO) at any time). A non-blocking call whose
 * socket is not ready is answered EAGAIN (its charge given back); a blocking one is parked on
 * epoll, holding its charge, until the socket is ready, or until the socket's SO_RCVTIMEO or
 * SO_SNDTIMEO runs out (the timer heap, from the first wait: then what moved, or EAGAIN).
 *
 * Signals. The filter is loaded with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19): once
 * we have received a call, its thread cannot leave it but by death, so a call we make in
 * pieces is never taken from under us (before, the kernel withdrew it at a signal and the
 * restart had to be guessed, and a handler making any system call defeated the guess: bytes
 * sent twice or lost). The kernel no longer interrupts a held call, so we do. A job that waits
 * (its slot, its socket, an RLT_CONNS place) looks at its thread's signals every tick
 * (RLT_SUP_TICK_NS, 5 ms, armed while any job is alive), and a call made in pieces at every
 * piece boundary: (SigPnd | ShdPnd) & ~SigBlk in /proc/TGID/task/TID/status, kept open per job
 * and read from offset 0. A process-directed signal (ShdPnd) counts only for the thread the
 * kernel woke for it (rlt_sup_signal_for in job_signals.c): answering a restart to a thread that has no
 * signal pending hands the program errno 512 (measured; Go failed its writes so). The call
 * then ends: one that moved N > 0 bytes is answered N, as the kernel answers a blocking call
 * interrupted after it moved data (sendfile's offset written back, MSG_WAITALL returns what it
 * got); one that moved nothing gives back its charge and is answered a restart, which the
 * kernel makes after the handler as a new call: -ERESTARTSYS when it waited for its socket or
 * pipe, as the kernel would (EINTR without SA_RESTART; -EINTR itself when the socket has a
 * timeout, as sock_intr_errno does), -ERESTARTNOINTR when it waited for the throttle (the
 * handler runs and the wait goes on: SPEC 4, never EINTR). A call CONTINUEd after its wait
 * (connect, a whole send, a datagram) whose thread has a signal pending when its turn comes is
 * answered -ERESTARTNOINTR too, as the kernel's own call would see the signal and fail with
 * EINTR (connect waiting for its handshake); its charge is kept, and the same call (thread,
 * number, arguments) coming back within 1 s goes through at once, uncharged (prepaid in
 * job_signals.c). The call restarted after an interrupted wait is charged
 * again: a token bucket gives it the same slot back when its thread is alone on the budget (the
 * refund undoes the charge exactly). So a handler runs within a tick or a piece. A tick also
 * ends the jobs of threads that died (their status read fails; the 250 ms sweep asks the
 * kernel whether each waiting notification is still valid). Bounds: a thread that shares a
 * budget with others and is interrupted again and again goes to the back of the queue each
 * time (its charge is not kept across the restart); a signal that comes before we receive a call is
 * the kernel's: it answers -ERESTARTSYS itself (EINTR without SA_RESTART, for any notified
 * call; a window of microseconds); a process signal that the leader blocks, in a process of
 * three threads or more, ends only a call that moved data (we cannot tell which thread got
 * it); a connection accepted for an accept given up this way waits for the next accept on that
 * listener. Cost: a read of /proc is some 4 us; a call parked over 100 ms on a quiet socket
 * is read every 40 ms only (all such on one grid), so 100 readers parked on idle sockets cost
 * the supervisor 2.3% of a core (0.2% without these reads), and their handlers run within
 * 45 ms; a call moving data or waiting for its slot is read every tick, or with more than 10
 * jobs alive every njobs x 0.5 ms (some 2000 reads a second in all): 400 threads waiting for
 * their slots cost the supervisor 4% of a core (45% read every tick), and a handler runs
 * within njobs x 0.5 ms (measured 130-140 ms for 400).
 *
 * The fd cache and what it cannot see: see fd_facts.c. Not seen: fds closed by io_uring (we make
 * io_uring_setup fail with ENOSYS so programs fall back to plain calls), a thread that calls
 * close_range(CLOSE_RANGE_UNSHARE), and a close-on-exec fd learnt by another thread between
 * an execve notification and the exec itself. preadv2/pwritev2 with offset -1, splice and
 * vmsplice on sockets are not throttled. 32-bit system calls (int 0x80) kill the process
 * (libseccomp's bad-architecture action), so they cannot bypass the filter.
 *
 * Failure cases (one line on stderr, exit 125, the command never runs):
 *  - seccomp() missing or user notification unsupported (kernel < 5.0, or a kernel without
 *    CONFIG_SECCOMP_FILTER): probed before the fork; we say so.
 *  - WAIT_KILLABLE_RECV refused (EINVAL: kernel < 5.19): probed before the fork; "--seccomp
 *    needs Linux 5.19 or newer".
 *  - the filter refused (seccomp forbidden by a container profile or an outer filter): idem.
 *  - pidfd_getfd refused (EPERM: ptrace restricted, kernel.yama.ptrace_scope=3 or a container
 *    profile) or missing (ENOSYS: kernel < 5.6): tried on the child before it execs.
 *  - a bad rule or variable: as the plain launcher (checked before anything starts).
 * RLT_INHERIT=0 cannot be honoured (a seccomp filter cannot be removed): the launcher says so
 * and exits 125 rather than throttle programs the user asked to leave alone.
 *
 * Our death (keeper.c). Before the command runs we fork a keeper that holds a duplicate of the
 * listener and a pidfd of us, and nothing else. While it holds the listener the kernel never
 * answers a notified call ENOSYS. We record in a table shared with it (MAP_SHARED) each process
 * we supervise, when we first see it and until its pidfd reports its end. If we die, the keeper
 * stops and then SIGKILLs those processes and their descendants, then kills each process that
 * still makes a notified call, and exits when the listener hangs up. The command also has
 * PR_SET_PDEATHSIG(SIGKILL), set before exec (our main thread forked it and lives to the end).
 * On our normal end (or a failure before the command runs) we kill and reap the keeper; if our
 * loop fails we kill the command and leave the rest of the tree to the keeper.
 *
 * The end. We answer until no task of the command is left (the listener hangs up), which
 * includes background children the command leaves behind, then write the summary and exit
 * with the command's status (128 + signal if it was killed, as a shell does). SIGTERM and
 * SIGHUP sent to the launcher (and SIGINT/SIGQUIT sent by kill, not by the terminal, which
 * sends them to the command itself) are passed on to the command.
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
#include "settings.h"
#include "stats.h"
#include "internal.h"
#include "supervisor.h"

static int log_level = RLT_LOG_WARN;
static pid_t log_pid;

void rlt_sup_log(const struct rlt_sup *s, int level, pid_t pid, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t n;

	if (level > (s ? s->loglevel : log_level))
		return;
	va_start(ap, fmt);
	n = rlt__log_line(line, sizeof line, pid ? pid : log_pid, fmt, ap);
	va_end(ap);
	if (write(2, line, n) < 0)
		return;
}

static void warn_rule(const char *msg, void *ctx)
{
	(void)ctx;
	rlt_sup_log(NULL, RLT_LOG_WARN, 0, "%s (rule ignored: RLT_ON_ERROR=ignore)", msg);
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
	const char *values[RLT_VAR_COUNT];
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
	rs.stats_on = set.stats[0] != 0;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		values[v] = getenv(rlt_var_name((enum rlt_var)v));
	if (rlt__ruleset_build(&rs, values, set.ignore_bad, warn_rule, NULL, &err) != 0)
		return fail(err.msg);
	raise_fd_limit();
	signal(SIGPIPE, SIG_IGN);

	rc = rlt_sup_child_spawn(cmd, &pid, &s.notify_fd, &ctl, &err);
	if (rc)
		return fail(err.msg);
	/* before the command runs, and before the lane thread: the keeper is forked from a
	 * process of one thread */
	if (rlt_sup_keeper_start(s.notify_fd, &err) != 0) {
		rlt_sup_child_abort(pid, ctl);
		return fail(err.msg);
	}
	rlt_sup_keeper_add(pid);
	log_pid = pid;
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
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs.n[v]; i++) {
			char canon[1024];
			rlt_rule_format(&rs.rules[v][i].rule, canon, sizeof canon);
			rlt_sup_log(&s, RLT_LOG_INFO, pid, "%s: %s (seccomp supervisor)",
			            rlt_var_name((enum rlt_var)v),
			            canon);
		}
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
	if (rc)
		return RLT_EXIT_OWN;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
