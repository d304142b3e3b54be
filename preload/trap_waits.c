/*
 * trap_waits.c: under the system-call front the waits (poll, select, epoll) and epoll_ctl on a
 * socket trap only from the moment a wait could hold a socket back.
 *
 * A wait needs reshaping (hook_poll.c, hook_epoll.c) only when something holds a socket's
 * readiness; until then it is answered as the kernel answers it, and a trapped one would cost a
 * signal for nothing: an event loop makes several waits and epoll_ctl per request
 * (redis-benchmark's ping: two waits and five epoll_ctl), a third of its rate under a rule
 * that never binds. When the trapping starts:
 *
 * - From the start of the image, when a hold can begin inside a call, before any wait or data
 *   call could see a shortage: a connect or accept rule (a non-blocking connect is held before
 *   its attempt starts, its registration made without its events, and taken out and added
 *   back: hook_connect.c, hook_epoll.c; a listener's readiness is held while the accept rules
 *   every client meets are short, its accept told EAGAIN), or network conditions (RLT_NET,
 *   even empty: a hang, a latency's due time, a connect's delay). Such a program pays a
 *   signal per wait, as all did before.
 * - Otherwise (send and receive rules only), from the first shortage: after each trapped call
 *   on a socket a wait may hold, the dispatch asks rlt_pre_fd_held of it (the waits' own
 *   question, at that moment). Budgets are spent only by charges, so in a process whose
 *   budgets are its own no wait finds a socket short before the answer is yes. The same
 *   question after a connect or accept catches one held there too, and a `set` that brings
 *   network conditions is seen at the next trapped call.
 *
 * Arming, once:
 * 1. a filter is stacked on every thread (trap_band.c rlt_trap_watch_waits, TSYNC): every wait
 *    and every epoll_ctl on a socket from now on is ours;
 * 2. the registrations made before it are read back from the kernel (/proc/self/fdinfo of each
 *    epoll instance) into the waits' table, as their epoll_ctl would have recorded them, and
 *    what is held is taken out at once;
 * 3. a thread asleep in an epoll wait it began before (not ours: it would not put a held event
 *    back when due, and may sleep for ever) is sent a SIGSYS of ours: its wait returns EINTR,
 *    as for any signal, and the program's next wait is ours. A poll or select begun before
 *    needs none: it reports what the kernel has, and the call that follows is refused (EAGAIN)
 *    and sends the program to a wait that is ours;
 * 4. the registrations are read again: one another thread was making at step 1 is in by then.
 * A budget shared with other processes (one per command) may be spent by another, and a rule
 * changed by `set`: this process learns it at its next trapped call on the socket.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hook_poll.h"
#include "load.h"
#include "net_hook.h"
#include "policy.h"
#include "rawsys.h"
#include "trap_abi.h"
#include "trap_band.h"
#include "trap_waits.h"

static _Atomic int armed;
/* Its address marks our wake (rlt_trap_is_wake). */
static const char wake_mark = 1;

/* "name: value" at *p (blanks before it skipped); 0 when it is not there. */
static int field(const char **p, const char *name, int base, unsigned long long *v)
{
	size_t len = strlen(name);
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (strncmp(*p, name, len))
		return 0;
	*v = strtoull(*p + len, &end, base);
	if (end == *p + len)
		return 0;
	*p = end;
	return 1;
}

/* One line of an epoll instance's fdinfo: "tfd: FD events: HEX data: HEX ...". */
static void adopt_line(int epfd, const char *s)
{
	unsigned long long fd, events, data;

	if (field(&s, "tfd:", 10, &fd) && field(&s, "events:", 16, &events) &&
	    field(&s, "data:", 16, &data) && fd < (unsigned)INT32_MAX)
		rlt_pre_epoll_adopt(epfd, (int)fd, (uint32_t)events, data);
}

/* The registrations of one instance, line by line (a line cut by the buffer is carried). */
static void adopt_epoll(int epfd)
{
	char path[48], buf[4096];
	size_t have = 0;
	long fd;

	snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
	fd = rlt_trap_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return;
	for (int i = 0; i < 100000; i++) {
		long n = rlt_trap_sys6(SYS_read, fd, (long)(buf + have), (long)(sizeof buf - 1 - have),
		                       0, 0, 0);
		char *line = buf, *nl;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			adopt_line(epfd, line);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1)
			have = 0; /* no line is this long */
	}
	rlt_trap_sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	rlt_pre_epoll_hold_now(epfd);
}

/* Every epoll instance of the process. */
static void adopt_all(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	for (int i = 0; i < 1000000 && (de = readdir(d)); i++) {
		char path[300], link[32];
		long n;
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
		n = rlt_trap_sys6(SYS_readlink, (long)path, (long)link, sizeof link - 1, 0, 0, 0);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, "anon_inode:[eventpoll]"))
			adopt_epoll((int)strtol(de->d_name, NULL, 10));
	}
	closedir(d);
}

/* What thread tid is in: 1 asleep in an epoll wait made outside the handler, 2 running (its
 * call unknown), 0 anything else (/proc/self/task/TID/syscall: the call's number, its six
 * arguments, the stack pointer, the instruction pointer). */
static int in_epoll_wait(long tid)
{
	char path[64], buf[256], *p;
	unsigned long long pc = 0;
	long fd, n, nr;

	snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
	fd = rlt_trap_sys6(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return 0;
	n = rlt_trap_sys6(SYS_read, fd, (long)buf, sizeof buf - 1, 0, 0, 0);
	rlt_trap_sys6(SYS_close, fd, 0, 0, 0, 0, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (!strncmp(buf, "running", 7))
		return 2;
	nr = strtol(buf, &p, 10);
	if (nr != SYS_epoll_wait && nr != SYS_epoll_pwait && nr != SYS_epoll_pwait2)
		return 0;
	for (int i = 0; i < 8; i++) /* the six arguments, the stack pointer, then pc */
		pc = strtoull(p, &p, 16);
	/* a wait made from the handler is ours already */
	return pc - RLT_TRAP_BASE >= RLT_TRAP_SPAN;
}

/* Sends our SIGSYS to each thread asleep in an epoll wait of its own; how many threads were
 * running (one may be on its way into such a wait). */
static int wake_pass(long pid, long self)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int running = 0;

	if (!d)
		return 0;
	for (int i = 0; i < 100000 && (de = readdir(d)); i++) {
		long tid = strtol(de->d_name, NULL, 10);
		int st;
		if (tid <= 0 || tid == self || !(st = in_epoll_wait(tid)))
			continue;
		if (st == 2) {
			running++;
			continue;
		}
		siginfo_t si;
		memset(&si, 0, sizeof si);
		si.si_signo = SIGSYS;
		si.si_code = SI_QUEUE;
		si.si_pid = (pid_t)pid;
		si.si_uid = (uid_t)rlt_trap_sys6(SYS_getuid, 0, 0, 0, 0, 0, 0);
		si.si_value.sival_ptr = (void *)&wake_mark;
		rlt_trap_sys6(SYS_rt_tgsigqueueinfo, pid, tid, SIGSYS, (long)&si, 0, 0);
	}
	closedir(d);
	return running;
}

int rlt_trap_is_wake(const siginfo_t *si)
{
	return si->si_code == SI_QUEUE && si->si_value.sival_ptr == (void *)&wake_mark &&
	       si->si_pid == (pid_t)rlt_trap_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

static void arm(void)
{
	long pid = rlt_trap_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long self = rlt_trap_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0);

	if (atomic_load_explicit(&armed, memory_order_relaxed) || atomic_exchange(&armed, 1))
		return;
	rlt_trap_watch_waits();
	adopt_all();
	/* a thread seen running may have been on its way into a wait: one look more, 1 ms on */
	if (wake_pass(pid, self)) {
		struct timespec ms = {0, 1000000};
		rlt_trap_sys6(SYS_nanosleep, (long)&ms, 0, 0, 0, 0, 0);
		wake_pass(pid, self);
	}
	adopt_all();
}

/* A hold that begins inside a call (see the top: rlt_pre_holds_in_calls) traps them from
 * the start. */
void rlt_trap_waits_start(void)
{
	if (atomic_load_explicit(&rlt_pre_active, memory_order_acquire) && rlt_pre_holds_in_calls())
		arm();
}

void rlt_trap_waits_after(long fd)
{
	rlt_ns_t due = RLT_NS_NEVER;
	int saved;

	if (atomic_load_explicit(&armed, memory_order_relaxed) || fd < 0 ||
	    !rlt_pre_wait_may_hold())
		return;
	saved = errno;
	if (rlt_pre_net_on() ||
	    (rlt_pre_fd_holdable((int)fd) &&
	     rlt_pre_fd_held((int)fd, RLT_PRE_IN_EVENTS | RLT_PRE_OUT_EVENTS, rlt__now(), &due)))
		arm();
	errno = saved;
}
