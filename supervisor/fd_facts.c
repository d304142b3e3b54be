/*
 * fd_facts.c: what each (process, fd) of the program is, learnt once and checked each time it
 * is used. A fact is learnt by asking the program's fd: not a socket (later calls on it are
 * answered CONTINUE after two look-ups and one fstatat of /proc/TGID/fd/N), or a socket's
 * type, family, peer and inode (taken from a duplicate, pidfd_getfd). The processes that hold
 * the fds are in proc_table.c.
 *
 * Nothing that releases an fd number is notified: a notified call can fail with EINTR before
 * we receive it (the kernel's wait for us is interruptible until then), and close() failing
 * with EINTR leaves the fd open where Linux programs take it as closed (they leak it; Python
 * raises InterruptedError). So a fact is checked when it is used: a socket's inode against
 * what the number refers to now (a fetched duplicate, or fstatat), a non-socket's "still not
 * a socket" (fstatat); a number that refers to something else gets new facts, and the old
 * socket's RLT_CONNS slots go back. Our duplicate of a socket is kept only while a call uses
 * it (pinned for the notification in hand, held by a job): kept longer, it would keep the
 * connection open after the program closed it (no FIN, the port still bound). The slots held
 * by sockets that were closed are given back by a sweep of the sockets that hold slots
 * (rlt_sup_fd_sweep, scheduled by job_conns.c) and at a process's end. What this cannot see
 * is listed in docs/DESIGN.md ("The supervisor in detail").
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

#include "clock.h"
#include "connect_attempt.h"
#include "internal.h"

struct rlt_sup_sock rlt_sup_not_a_socket;

/* fds beyond this are not cached (looked up each time): the table would be too large. */
#define FD_CACHE_MAX (1u << 20)

void rlt_sup_sock_rematch(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	rlt__match_socket(s->rs, &k->peer, k->af, k->mask);
}

static int table_fit(struct rlt_sup_proc *p, unsigned fd)
{
	unsigned n = p->nfds ? p->nfds : 64;
	struct rlt_sup_sock **t;

	if (fd < p->nfds)
		return 0;
	while (n <= fd)
		n *= 2;
	t = realloc(p->fds, n * sizeof *t);
	if (!t)
		return -ENOMEM;
	memset(t + p->nfds, 0, (n - p->nfds) * sizeof *t);
	p->fds = t;
	p->nfds = n;
	return 0;
}

static struct rlt_sup_sock *sock_new(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int type,
                                     int af, const struct stat *st)
{
	struct rlt_sup_sock *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	k->refs = 1;
	k->dup = -1;
	k->type = type;
	k->af = af;
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	k->proc = p;
	k->fd = fd;
	if (s->rs->conn_block_size) {
		k->conn_block = calloc(1, s->rs->conn_block_size);
		if (k->conn_block)
			rlt__conn_block_init(s->rs, k->conn_block);
	}
	return k;
}

struct rlt_sup_sock *rlt_sup_sock_hold(struct rlt_sup_sock *k)
{
	if (k && k != RLT_NOT_SOCKET)
		k->refs++;
	return k;
}

/* One reference fewer: the facts go with the last one, our duplicate as soon as no call uses
 * it (the cache's reference alone does not keep it). */
void rlt_sup_sock_put(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	(void)s;
	if (!k || k == RLT_NOT_SOCKET)
		return;
	if (--k->refs == 0) {
		if (k->dup >= 0)
			close(k->dup);
		free(k->conn_block);
		free(k);
	} else if (k->refs == 1 && k->cached && k->dup >= 0) {
		close(k->dup);
		k->dup = -1;
	}
}

/* Kept with its duplicate open until the notification in hand is done with. */
static struct rlt_sup_sock *pin(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	if (!k->pinned) {
		k->pinned = 1;
		k->refs++;
		k->pin_next = s->pinned;
		s->pinned = k;
	}
	return k;
}

void rlt_sup_fd_unpin(struct rlt_sup *s)
{
	while (s->pinned) {
		struct rlt_sup_sock *k = s->pinned;
		s->pinned = k->pin_next;
		k->pin_next = NULL;
		k->pinned = 0;
		rlt_sup_sock_put(s, k);
	}
}

static void held_unlink(struct rlt_sup_sock *k)
{
	if (!k->held_prev)
		return;
	*k->held_prev = k->held_next;
	if (k->held_next)
		k->held_next->held_prev = k->held_prev;
	k->held_next = NULL;
	k->held_prev = NULL;
}

void rlt_sup_sock_take_conns(struct rlt_sup *s, struct rlt_sup_sock *k, uint32_t mask,
                             const struct rlt__peer *peer)
{
	if (!mask)
		return;
	if (!k->cached) {
		/* its fd was found closed or replaced while the call waited */
		rlt_sup_conns_release(s, mask, peer);
		return;
	}
	/* one connect (or accept) takes a socket's slots: it holds none yet (rlt__connect_counts) */
	k->conns_peer = *peer;
	k->conns_mask |= mask;
	if (!k->held_prev) {
		k->held_next = s->conns_held;
		if (k->held_next)
			k->held_next->held_prev = &k->held_next;
		s->conns_held = k;
		k->held_prev = &s->conns_held;
	}
}

/* The program's fd no longer refers to it: its RLT_CONNS slots go back now, the facts when no
 * job holds them. */
static void sock_drop(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	k->cached = 0;
	held_unlink(k);
	if (k->conns_mask) {
		uint32_t m = k->conns_mask;
		k->conns_mask = 0;
		rlt_sup_conns_release(s, m, &k->conns_peer);
	}
	rlt_sup_sock_put(s, k);
}

/* Connections accepted for a listener at this number (lfd < 0: any) that no accept took: the
 * listener is gone, so are they. */
void rlt_sup_fd_stash_drop(struct rlt_sup *s, struct rlt_sup_proc *p, int lfd)
{
	struct rlt_sup_accepted **pp = &p->stash;

	while (*pp) {
		struct rlt_sup_accepted *a = *pp;
		if (lfd >= 0 && a->lfd != lfd) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		if (a->conns_mask)
			rlt_sup_conns_release(s, a->conns_mask, &a->conns_peer);
		close(a->sock);
		free(a);
	}
}

/* Our duplicate of the program's fd (pidfd_getfd) and its stat in *st, or -errno. */
static int fetch(struct rlt_sup_proc *p, int fd, struct stat *st)
{
	int d = rlt_sup_getfd(p->pidfd, fd);

	if (d >= 0 && fstat(d, st) != 0) {
		int e = -errno;
		close(d);
		return e;
	}
	return d;
}

/* Whether st is k's socket. */
static int same_sock(const struct rlt_sup_sock *k, const struct stat *st)
{
	return S_ISSOCK(st->st_mode) && st->st_ino == k->ino && st->st_dev == k->dev;
}

/* What the program's fd number refers to now: 0 and *st, or -errno (-EBADF: not open). One
 * fstatat of /proc/TGID/fd/N, which follows the number to its file without fetching it. */
static int fd_stat(struct rlt_sup_proc *p, int fd, struct stat *st)
{
	char name[12], *c = name + sizeof name;
	unsigned v = (unsigned)fd;
	int d;

	if (p->fd_dir >= 0) {
		*--c = '\0';
		do
			*--c = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		if (fstatat(p->fd_dir, c, st, 0) == 0)
			return 0;
		return errno == ENOENT ? -EBADF : -errno;
	}
	d = fetch(p, fd, st);
	if (d < 0)
		return d;
	close(d);
	return 0;
}

/* Remembers what fd is (when its number is small enough to be cached). 0 or -ENOMEM. */
static int remember(struct rlt_sup_proc *p, int fd, struct rlt_sup_sock *k)
{
	if ((unsigned)fd >= FD_CACHE_MAX || table_fit(p, (unsigned)fd) != 0)
		return -ENOMEM;
	p->fds[fd] = k;
	if (k != RLT_NOT_SOCKET)
		k->cached = 1;
	return 0;
}

/* The facts of fd, from dup, our duplicate of it now (st: its stat); dup is the socket's, or
 * closed. */
static struct rlt_sup_sock *learn(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int dup,
                                  const struct stat *st, int *rc)
{
	struct rlt_sup_sock *k;
	int type = 0, af = 0;
	socklen_t l;

	if (!S_ISSOCK(st->st_mode)) {
		close(dup);
		remember(p, fd, RLT_NOT_SOCKET); /* its "still not a socket" is checked (fstatat) */
		return RLT_NOT_SOCKET;
	}
	l = sizeof type;
	getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &l);
	l = sizeof af;
	getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &af, &l);
	k = sock_new(s, p, fd, type, af, st);
	if (!k) {
		close(dup);
		*rc = -ENOMEM;
		return NULL;
	}
	k->dup = dup;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (getpeername(dup, (struct sockaddr *)&ss, &sl) == 0)
		rlt__peer_from_sockaddr(&k->peer, (struct sockaddr *)&ss, sl);
	sl = sizeof ss;
	if (getsockname(dup, (struct sockaddr *)&ss, &sl) == 0) {
		struct rlt__peer me;
		rlt__peer_from_sockaddr(&me, (struct sockaddr *)&ss, sl);
		k->local_port = me.port;
	}
	rlt_sup_sock_rematch(s, k);
	if (remember(p, fd, k) != 0) {
		/* not cached: the caller cannot keep it either; answer as for an unknown fd */
		rlt_sup_sock_put(s, k);
		*rc = -ENOMEM;
		return NULL;
	}
	return pin(s, k);
}

struct rlt_sup_sock *rlt_sup_fd_facts(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int *rc)
{
	struct rlt_sup_sock *k = NULL;
	struct stat st;
	int dup, r;

	if (fd < 0) {
		*rc = -EBADF;
		return NULL;
	}
	if ((unsigned)fd < p->nfds)
		k = p->fds[fd];
	if (k && k != RLT_NOT_SOCKET) {
		/* a socket: a call on it needs our duplicate, so fetch it and compare; when a job
		 * holds one already, the number is only checked (fstatat) */
		dup = -1;
		r = k->dup >= 0 ? fd_stat(p, fd, &st) : (dup = fetch(p, fd, &st));
		if (r < 0) {
			if (r == -EBADF)
				rlt_sup_fd_forget(s, p, fd);
			*rc = r;
			return NULL;
		}
		if (same_sock(k, &st)) {
			if (dup >= 0)
				k->dup = dup;
			return pin(s, k);
		}
		/* the number refers to another file now: the socket was closed */
		rlt_sup_fd_forget(s, p, fd);
	} else {
		/* unknown, or not a socket when last asked: is it one now? (without /proc, the
		 * fetch that tells is the duplicate learn() keeps) */
		dup = -1;
		r = p->fd_dir >= 0 ? fd_stat(p, fd, &st) : (dup = fetch(p, fd, &st));
		if (r < 0) {
			if (r == -EBADF)
				rlt_sup_fd_forget(s, p, fd);
			*rc = r;
			return NULL;
		}
		if (!S_ISSOCK(st.st_mode)) {
			if (dup >= 0)
				close(dup);
			if (!k)
				remember(p, fd, RLT_NOT_SOCKET);
			return RLT_NOT_SOCKET;
		}
		rlt_sup_fd_forget(s, p, fd);
	}
	if (dup < 0 && (dup = fetch(p, fd, &st)) < 0) {
		*rc = dup;
		return NULL;
	}
	return learn(s, p, fd, dup, &st, rc);
}

int rlt_sup_fd_adopt(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int ourfd, int type,
                     const struct rlt__peer *peer, uint32_t conns_mask,
                     const struct rlt__peer *conns_peer)
{
	struct rlt_sup_sock *k;
	struct stat st;

	rlt_sup_fd_forget(s, p, fd);
	if (fd < 0 || (unsigned)fd >= FD_CACHE_MAX || table_fit(p, (unsigned)fd) != 0 ||
	    fstat(ourfd, &st) != 0)
		return -ENOMEM;
	k = sock_new(s, p, fd, type, peer->af == AF_INET6 ? AF_INET6 : AF_INET, &st);
	if (!k)
		return -ENOMEM;
	k->peer = *peer;
	rlt_sup_sock_rematch(s, k);
	remember(p, fd, k);
	rlt_sup_sock_take_conns(s, k, conns_mask, conns_peer);
	/* the program has the connection now; ours would keep it open after the program's close */
	close(ourfd);
	return 0;
}

void rlt_sup_fd_forget(struct rlt_sup *s, struct rlt_sup_proc *p, int fd)
{
	struct rlt_sup_sock *k;

	if (fd < 0 || (unsigned)fd >= p->nfds || !p->fds[fd])
		return;
	k = p->fds[fd];
	p->fds[fd] = NULL;
	if (k == RLT_NOT_SOCKET)
		return;
	rlt_sup_fd_stash_drop(s, p, fd);
	sock_drop(s, k);
}

void rlt_sup_fd_forget_all(struct rlt_sup *s, struct rlt_sup_proc *p)
{
	for (unsigned fd = 0; fd < p->nfds; fd++)
		rlt_sup_fd_forget(s, p, (int)fd);
}

/* Whether the program's fd number still refers to this socket (1 when it cannot be told: /proc
 * refused, say; the slots are then kept until the process ends). */
static int still_open(struct rlt_sup_sock *k)
{
	struct stat st;
	int r = fd_stat(k->proc, k->fd, &st);

	if (r == -EBADF || r == -ESRCH)
		return 0;
	if (r < 0)
		return 1;
	return same_sock(k, &st);
}

unsigned rlt_sup_fd_sweep(struct rlt_sup *s)
{
	rlt_ns_t t0 = rlt__now();
	unsigned n = 0;

	/* Bounded by the sockets holding slots now: forgetting one unlinks only that one. */
	for (struct rlt_sup_sock *k = s->conns_held, *next; k; k = next) {
		next = k->held_next;
		if (!still_open(k)) {
			rlt_sup_fd_forget(s, k->proc, k->fd);
			n++;
		}
	}
	s->sweep_end = rlt__now();
	s->sweep_cost = s->sweep_end - t0;
	return n;
}
