/*
 * keeper.c: the supervised tree dies with its supervisor (issue 9).
 *
 * Once the last holder of a filter's listener closes it, the kernel answers every notified call
 * with ENOSYS: a program whose supervisor was killed (kill -9, the OOM killer) would go on with
 * every read and write of its files, pipes and sockets failing, and lose data. So before the
 * command runs, the supervisor forks a keeper: a small process that holds a duplicate of the
 * listener (so no call is ever answered ENOSYS), a pidfd of the supervisor, and nothing else
 * (not stdout: a `| cat` after the launcher must end when the launcher does). It sleeps in
 * poll() until one of two things happens:
 *  - the listener hangs up: no task of the command is left, a normal end; the keeper exits
 *    (the supervisor also kills it when it ends, so it never outlives the tree);
 *  - the supervisor's pidfd turns readable: it died. The keeper then kills, with SIGKILL, every
 *    process the supervisor had recorded (a MAP_SHARED table it keeps: pid and start time,
 *    added when it first sees a process, removed when the process ends) and their descendants
 *    (stopped first, so that none is reparented out of reach while we look), then receives the
 *    notifications still to come and kills each process that makes one, until the listener
 *    hangs up, and exits. The notified calls of the tree are never answered: the processes die
 *    in them, having lost nothing they believed done.
 * Bound: a process that left the tree (its parent died, it was reparented) and that makes no
 * notified call lives on; its first notified call kills it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "proc_stat.h"

/* Processes recorded at once; beyond that the descendant walk and the notifications still find
 * them. */
#define KEEPER_SLOTS 4096
/* The most processes the keeper kills in its walk of the tree. */
#define KEEPER_WALK_MAX 8192

struct keeper_slot {
	_Atomic int32_t pid;    /* 0: free */
	_Atomic uint64_t start; /* its start time (clock ticks since boot): a reused pid is not it */
};

static struct keeper_slot *table; /* shared with the keeper (MAP_SHARED) */
static pid_t keeper_pid = -1;

/* When the process started (0 when it cannot be read): tells it from a later process given the
 * same pid. */
static uint64_t start_time(pid_t pid)
{
	struct rlt__proc_stat ps;

	return rlt__proc_stat(pid, &ps) == 0 ? ps.start : 0;
}

void rlt_sup_keeper_add(pid_t pid)
{
	unsigned free_slot = KEEPER_SLOTS;

	if (!table)
		return;
	for (unsigned i = 0; i < KEEPER_SLOTS; i++) {
		pid_t q = atomic_load_explicit(&table[i].pid, memory_order_relaxed);
		if (q == pid)
			return; /* the command is recorded at its start, and again at its first call */
		if (q == 0 && free_slot == KEEPER_SLOTS)
			free_slot = i;
	}
	if (free_slot < KEEPER_SLOTS) {
		atomic_store_explicit(&table[free_slot].start, start_time(pid), memory_order_relaxed);
		atomic_store_explicit(&table[free_slot].pid, pid, memory_order_release);
	}
}

void rlt_sup_keeper_del(pid_t pid)
{
	if (!table)
		return;
	for (unsigned i = 0; i < KEEPER_SLOTS; i++)
		if (atomic_load_explicit(&table[i].pid, memory_order_relaxed) == pid) {
			atomic_store_explicit(&table[i].pid, 0, memory_order_release);
			return;
		}
}

static int pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* The walk: stopped processes, as pidfds, so that a pid reused meanwhile is never signalled. */
struct walk {
	int pidfd[KEEPER_WALK_MAX];
	pid_t pid[KEEPER_WALK_MAX];
	unsigned n;
};

/* Its parent; 0 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	struct rlt__proc_stat ps;

	return rlt__proc_stat(pid, &ps) == 0 ? ps.ppid : 0;
}

static void walk_add(struct walk *w, pid_t pid, uint64_t start, pid_t parent)
{
	if (w->n >= KEEPER_WALK_MAX)
		return;
	for (unsigned i = 0; i < w->n; i++)
		if (w->pid[i] == pid)
			return;
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return;
	/* With the pidfd held, the pid names this process until we close it: check that it is
	 * the one recorded (its start time) or still the child of the stopped parent we read it
	 * from. */
	if (start && start_time(pid) != start) {
		close(fd);
		return;
	}
	if (parent && parent_of(pid) != parent) {
		close(fd);
		return;
	}
	/* Stopped, a process neither forks nor exits, so its children stay its children while we
	 * read them. */
	pidfd_signal(fd, SIGSTOP);
	w->pidfd[w->n] = fd;
	w->pid[w->n] = pid;
	w->n++;
}

/* The children of every thread of pid, added to the walk. */
static void walk_children(struct walk *w, pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char cpath[320], buf[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid, e->d_name);
		int fd = open(cpath, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *p = buf, *end; *p; p = end) {
			long c = strtol(p, &end, 10);
			if (end == p)
				break;
			if (c > 0)
				walk_add(w, (pid_t)c, 0, pid);
		}
	}
	closedir(d);
}

/* The supervisor died: kill what it supervised, and what that started. */
static void kill_tree(void)
{
	static struct walk w;

	for (unsigned i = 0; i < KEEPER_SLOTS; i++) {
		pid_t pid = atomic_load_explicit(&table[i].pid, memory_order_acquire);
		uint64_t start = atomic_load_explicit(&table[i].start, memory_order_relaxed);
		if (pid > 0 && start) /* no start time: it had ended when it was recorded */
			walk_add(&w, pid, start, 0);
	}
	for (unsigned i = 0; i < w.n; i++) /* w.n grows as children are found */
		walk_children(&w, w.pid[i]);
	for (unsigned i = 0; i < w.n; i++) {
		pidfd_signal(w.pidfd[i], SIGKILL);
		close(w.pidfd[i]);
	}
}

/* The keeper's life; never returns. */
static void keeper_main(int listener, int sup_pidfd)
{
	struct pollfd pf[2] = {{sup_pidfd, POLLIN, 0}, {listener, 0, 0}};
	int orphaned = 0;

	/* A terminal's ^C or hang-up is for the command (the supervisor passes them on), not for
	 * the keeper, whose death would leave the tree unguarded. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_NAME, "rlthrottle-keep", 0, 0, 0);
	for (;;) {
		int n = poll(pf, orphaned ? 1 : 2, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(0);
		}
		struct pollfd *l = orphaned ? &pf[0] : &pf[1];
		if (l->revents & (POLLHUP | POLLERR | POLLNVAL))
			_exit(0); /* no task of the command is left */
		if (!orphaned && (pf[0].revents & POLLIN)) {
			kill_tree();
			orphaned = 1;
			pf[0] = (struct pollfd){listener, POLLIN, 0};
			continue;
		}
		if (orphaned && (l->revents & POLLIN)) {
			struct seccomp_notif req;
			memset(&req, 0, sizeof req);
			/* any thread id names its whole process to kill() */
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
				kill((pid_t)req.pid, SIGKILL);
		}
	}
}

/* Closes every fd but a and b (both >= 3), and points 0, 1 and 2 at /dev/null. */
static void keep_only(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int fd = 0; fd < 3; fd++)
		if (null >= 0 && null != fd)
			dup2(null, fd);
	if (lo > 3)
		syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u);
	if (hi > lo + 1)
		syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0u);
	syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u);
}

int rlt_sup_keeper_start(int notify_fd, struct rlt_error *err)
{
	int sup_pidfd, lfd;
	pid_t p;

	table = mmap(NULL, KEEPER_SLOTS * sizeof *table, PROT_READ | PROT_WRITE,
	             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED) {
		table = NULL;
		snprintf(err->msg, sizeof err->msg, "--seccomp: cannot map the keeper's table: %s",
		         strerror(errno));
		return -1;
	}
	sup_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	lfd = fcntl(notify_fd, F_DUPFD_CLOEXEC, 3);
	if (sup_pidfd < 0 || lfd < 0) {
		snprintf(err->msg, sizeof err->msg, "--seccomp: cannot start the keeper: %s",
		         strerror(errno));
		goto fail;
	}
	if (sup_pidfd < 3) {
		int moved = fcntl(sup_pidfd, F_DUPFD_CLOEXEC, 3);
		close(sup_pidfd);
		sup_pidfd = moved;
	}
	fflush(NULL);
	p = fork();
	if (p < 0) {
		snprintf(err->msg, sizeof err->msg, "--seccomp: cannot start the keeper: fork: %s",
		         strerror(errno));
		goto fail;
	}
	if (p == 0) {
		keep_only(lfd, sup_pidfd);
		keeper_main(lfd, sup_pidfd);
	}
	close(lfd);
	close(sup_pidfd);
	keeper_pid = p;
	return 0;
fail:
	if (sup_pidfd >= 0)
		close(sup_pidfd);
	if (lfd >= 0)
		close(lfd);
	munmap(table, KEEPER_SLOTS * sizeof *table);
	table = NULL;
	return -1;
}

void rlt_sup_keeper_stop(void)
{
	int st;

	if (keeper_pid <= 0)
		return;
	kill(keeper_pid, SIGKILL);
	while (waitpid(keeper_pid, &st, 0) < 0 && errno == EINTR)
		;
	keeper_pid = -1;
}
