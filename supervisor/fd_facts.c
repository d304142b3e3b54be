/*
 * fd_facts.c: what each (process, fd) of the program is, learnt once and kept true. A fact is
 * learnt by taking a duplicate of the program's fd (pidfd_getfd) and asking it: not a socket
 * (the fast path: later calls on it are answered CONTINUE after two look-ups), or a socket's
 * type, family and peer (the duplicate is kept, to make calls on the program's behalf without
 * fetching it again). The processes that hold the fds are in proc_table.c.
 *
 * It stays true because every way an fd number is released or replaced is seen: close,
 * close_range, dup2/dup3 onto it, and execve (close-on-exec fds: the whole process is
 * forgotten) are notified, and a process's exit is seen on its pidfd. A new fd (socket, dup,
 * accept, a received SCM_RIGHTS) always lands on a released number, which holds no fact, so
 * the calls that create fds need no notification of their own. The ways we cannot see are
 * listed in docs/DESIGN.md ("The supervisor in detail") (io_uring's close, a thread that execs while
 * another one is in a call).
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

static struct rlt_sup_sock *sock_new(struct rlt_sup *s, int dup, int type, int af)
{
	struct rlt_sup_sock *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	k->refs = 1;
	k->dup = dup;
	k->type = type;
	k->af = af;
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

void rlt_sup_sock_put(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	(void)s;
	if (!k || k == RLT_NOT_SOCKET || --k->refs > 0)
		return;
	close(k->dup);
	free(k->conn_block);
	free(k);
}

/* The program's fd is gone: its RLT_CONNS slots go back now, the facts when no job holds them. */
static void sock_free(struct rlt_sup *s, struct rlt_sup_sock *k)
{
	if (!k || k == RLT_NOT_SOCKET)
		return;
	if (k->conns_mask) {
		uint32_t m = k->conns_mask;
		k->conns_mask = 0;
		rlt_sup_conns_release(s, m);
	}
	rlt_sup_sock_put(s, k);
}

struct rlt_sup_sock *rlt_sup_fd_facts(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int *rc)
{
	struct rlt_sup_sock *k;
	struct stat st;
	int dup, type = 0, af = 0;
	socklen_t l;

	if (fd < 0) {
		*rc = -EBADF;
		return NULL;
	}
	if ((unsigned)fd < p->nfds && p->fds[fd])
		return p->fds[fd];
	dup = rlt_sup_getfd(p->pidfd, fd);
	if (dup < 0) {
		*rc = dup;
		return NULL;
	}
	if (fstat(dup, &st) != 0 || !S_ISSOCK(st.st_mode)) {
		close(dup);
		k = RLT_NOT_SOCKET;
	} else {
		l = sizeof type;
		getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &l);
		l = sizeof af;
		getsockopt(dup, SOL_SOCKET, SO_DOMAIN, &af, &l);
		k = sock_new(s, dup, type, af);
		if (!k) {
			close(dup);
			*rc = -ENOMEM;
			return NULL;
		}
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
	}
	if ((unsigned)fd < FD_CACHE_MAX && table_fit(p, (unsigned)fd) == 0) {
		p->fds[fd] = k;
	} else if (k != RLT_NOT_SOCKET) {
		/* not cached: the caller cannot keep it either; answer as for an unknown fd */
		sock_free(s, k);
		*rc = -ENOMEM;
		return NULL;
	}
	return k;
}

int rlt_sup_fd_adopt(struct rlt_sup *s, struct rlt_sup_proc *p, int fd, int ourfd, int type,
                     const struct rlt__peer *peer, uint32_t conns_mask)
{
	struct rlt_sup_sock *k;

	rlt_sup_fd_forget(s, p, fd);
	if (fd < 0 || (unsigned)fd >= FD_CACHE_MAX || table_fit(p, (unsigned)fd) != 0)
		return -ENOMEM;
	k = sock_new(s, ourfd, type, peer->af == AF_INET6 ? AF_INET6 : AF_INET);
	if (!k)
		return -ENOMEM;
	k->peer = *peer;
	k->conns_mask = conns_mask;
	rlt_sup_sock_rematch(s, k);
	p->fds[fd] = k;
	return 0;
}

void rlt_sup_fd_forget(struct rlt_sup *s, struct rlt_sup_proc *p, int fd)
{
	if (fd < 0 || (unsigned)fd >= p->nfds || !p->fds[fd])
		return;
	sock_free(s, p->fds[fd]);
	p->fds[fd] = NULL;
}

void rlt_sup_fd_forget_range(struct rlt_sup *s, struct rlt_sup_proc *p, unsigned lo, unsigned hi)
{
	for (unsigned fd = lo; fd < p->nfds && fd <= hi; fd++)
		rlt_sup_fd_forget(s, p, (int)fd);
}
