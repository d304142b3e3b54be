/*
 * proc_table.c: the processes of the program and their threads. Threads share their process's
 * fd table, so facts are kept per thread group (tgid) and a thread id is mapped to its group
 * once, from /proc/TID/status. A child of vfork or posix_spawn shares its parent's memory but
 * not its fd table, and is a thread group of its own: its fds are asked of its own table,
 * never of its parent's. A process's exit is seen on its pidfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "publish.h"
#include "ruleset_fork.h"

static unsigned proc_bucket(pid_t p)
{
	return (unsigned)p % RLT_SUP_PROC_BUCKETS;
}

static unsigned tid_bucket(pid_t t)
{
	return (unsigned)t % RLT_SUP_TID_BUCKETS;
}

static struct rlt_sup_proc *proc_find(struct rlt_sup *s, pid_t tgid)
{
	for (struct rlt_sup_proc *p = s->procs[proc_bucket(tgid)]; p; p = p->next)
		if (p->tgid == tgid && !p->gone)
			return p;
	return NULL;
}

/* A pid line of /proc/PID/status ("Tgid", "PPid"). */
static pid_t status_pid(pid_t pid, const char *key, int *rc)
{
	char path[64], buf[1024], want[16];
	int fd;
	ssize_t n;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*rc = -errno;
		return -1;
	}
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0) {
		*rc = n < 0 ? -errno : -ESRCH;
		return -1;
	}
	buf[n] = '\0';
	snprintf(want, sizeof want, "\n%s:", key);
	char *t = strstr(buf, want);
	if (!t) {
		*rc = -ESRCH;
		return -1;
	}
	return (pid_t)strtol(t + strlen(want), NULL, 10);
}

/*
 * The budgets a newly seen process starts from (rlthrottle(7) BEHAVIOUR: a forked child has its own, starting
 * where its parent's stood): those of its nearest supervised ancestor, or the command's. We
 * see a process at its first call, not at its fork, so "where the parent stood" is where it
 * stands then. Bounded: 64 generations.
 */
static struct rlt__ruleset *parent_budgets(struct rlt_sup *s, pid_t tgid)
{
	int rc;
	pid_t pid = tgid;

	for (int depth = 0; depth < 64; depth++) {
		pid = status_pid(pid, "PPid", &rc);
		if (pid <= 1 || pid == s->child)
			break;
		struct rlt_sup_proc *a = proc_find(s, pid);
		if (a)
			return a->rs;
	}
	return s->rs; /* the command's own */
}

static struct rlt_sup_proc *proc_new(struct rlt_sup *s, pid_t tgid, int *rc)
{
	struct rlt_sup_proc *p = calloc(1, sizeof *p);
	struct epoll_event ev;

	if (!p) {
		*rc = -ENOMEM;
		return NULL;
	}
	p->tgid = tgid;
	p->rs = s->rs;
	if (tgid != s->child) {
		p->rs = rlt__ruleset_fork(parent_budgets(s, tgid));
		p->owns_rs = p->rs != NULL;
		/* its own page, published as long as the command's is */
		struct rlt_error err;
		if (p->rs && s->rs->pub && rlt__pub_create(p->rs, tgid, 1, &err) != 0)
			rlt_sup_log(s, RLT_LOG_INFO, tgid, "%s (running unpublished)", err.msg);
		if (!p->rs) {
			rlt_sup_log(s, RLT_LOG_WARN, tgid,
			            "no memory for the budgets of process %d: it shares the command's",
			            (int)tgid);
			p->rs = s->rs;
		}
	}
	p->pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (p->pidfd < 0) {
		*rc = -errno;
		if (p->owns_rs)
			rlt__ruleset_join(s->rs, p->rs);
		free(p);
		return NULL;
	}
	fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
	/* what its fd numbers refer to, asked without fetching them (fd_facts.c); without it,
	 * they are fetched */
	char dir[48];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)tgid);
	p->fd_dir = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* the pidfd turns readable when the whole thread group has exited */
	ev.events = EPOLLIN;
	ev.data.ptr = p;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, p->pidfd, &ev) != 0) {
		*rc = -errno;
		close(p->pidfd);
		if (p->fd_dir >= 0)
			close(p->fd_dir);
		if (p->owns_rs)
			rlt__ruleset_join(s->rs, p->rs);
		free(p);
		return NULL;
	}
	p->next = s->procs[proc_bucket(tgid)];
	s->procs[proc_bucket(tgid)] = p;
	rlt_sup_keeper_add(tgid);
	rlt_sup_log(s, RLT_LOG_DEBUG, tgid, "supervising process %d", (int)tgid);
	return p;
}

struct rlt_sup_proc *rlt_sup_proc_of_tid(struct rlt_sup *s, pid_t tid, int *rc)
{
	struct rlt_sup_tidmap *m;
	struct rlt_sup_proc *p;
	pid_t tgid;

	for (m = s->tids[tid_bucket(tid)]; m; m = m->next)
		if (m->tid == tid)
			return m->proc;
	tgid = status_pid(tid, "Tgid", rc);
	if (tgid <= 0)
		return NULL;
	p = proc_find(s, tgid);
	if (!p && !(p = proc_new(s, tgid, rc)))
		return NULL;
	m = malloc(sizeof *m);
	if (!m) {
		*rc = -ENOMEM;
		return NULL;
	}
	m->tid = tid;
	m->proc = p;
	m->next = s->tids[tid_bucket(tid)];
	s->tids[tid_bucket(tid)] = m;
	return p;
}

/* Forgets the thread ids of a process (all of them, or only those that are no longer its
 * threads: a thread that ended, whose id may be given to another task later). */
static void tids_drop(struct rlt_sup *s, struct rlt_sup_proc *p, int only_dead)
{
	for (unsigned b = 0; b < RLT_SUP_TID_BUCKETS; b++) {
		struct rlt_sup_tidmap **pp = &s->tids[b];
		while (*pp) {
			struct rlt_sup_tidmap *m = *pp;
			int drop = m->proc == p &&
			           (!only_dead || syscall(SYS_tgkill, p->tgid, m->tid, 0) != 0);
			if (drop) {
				*pp = m->next;
				free(m);
			} else {
				pp = &m->next;
			}
		}
	}
}

static void proc_free(struct rlt_sup *s, struct rlt_sup_proc *p)
{
	struct rlt_sup_proc **pp = &s->procs[proc_bucket(p->tgid)];

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	rlt_sup_fd_forget_all(s, p);
	free(p->fds);
	rlt_sup_fd_stash_drop(s, p, -1);
	if (p->pidfd >= 0)
		close(p->pidfd);
	if (p->fd_dir >= 0)
		close(p->fd_dir);
	if (p->owns_rs)
		rlt__ruleset_join(s->rs, p->rs); /* its statistics join the command's summary, its
		                                     page goes */
	else if (p->tgid == s->child)
		rlt__pub_unlink(s->rs->pub); /* the command's: the summary still reads its counters */
	free(p);
}

void rlt_sup_proc_gone(struct rlt_sup *s, struct rlt_sup_proc *p)
{
	rlt_sup_log(s, RLT_LOG_DEBUG, p->tgid, "process %d has exited", (int)p->tgid);
	p->gone = 1;
	rlt_sup_keeper_del(p->tgid);
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, p->pidfd, NULL);
	tids_drop(s, p, 0);
	/* its sockets: their RLT_CONNS slots go back */
	rlt_sup_fd_forget_all(s, p);
	if (p->jobs == 0)
		proc_free(s, p);
}

void rlt_sup_proc_put(struct rlt_sup *s, struct rlt_sup_proc *p)
{
	if (p && --p->jobs == 0 && p->gone)
		proc_free(s, p);
}

void rlt_sup_tids_sweep(struct rlt_sup *s)
{
	for (unsigned b = 0; b < RLT_SUP_PROC_BUCKETS; b++)
		for (struct rlt_sup_proc *p = s->procs[b]; p; p = p->next)
			if (!p->gone)
				tids_drop(s, p, 1);
}

void rlt_sup_procs_free(struct rlt_sup *s)
{
	for (unsigned b = 0; b < RLT_SUP_PROC_BUCKETS; b++)
		while (s->procs[b]) {
			struct rlt_sup_proc *p = s->procs[b];
			p->gone = 1;
			tids_drop(s, p, 0);
			proc_free(s, p);
		}
}
