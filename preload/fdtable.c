/*
 * fdtable.c: what a hook needs to know about an fd, found by indexing an array with the fd.
 *
 * The table is one anonymous mapping reserved once at load for every fd the process may ever
 * have (the hard RLIMIT_NOFILE, capped), never grown or moved, so that a reader never races a
 * resize and a call on a file or pipe costs one array look-up. Untouched pages cost nothing.
 *
 * Connection blocks (connection-scope states, the RLT_CONNS count of a socket) are shared by
 * the fds of one socket (dup), and are recycled through a free list, never unmapped: a thread
 * still using a block another thread just released reads stale state, never freed memory.
 * They are taken without a lock, because a socket's first I/O may happen in a signal handler
 * that interrupted this very code (or in a fork child whose other threads are gone): one region
 * is reserved at load, fresh blocks are cut from it by an atomic add, and released ones go on a
 * Treiber stack whose head carries a tag against ABA.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "accept_queue.h"
#include "conns.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "net_hook.h"
#include "load.h"
#include "real.h"

#define TABLE_MAX (1u << 20)
#define TABLE_MIN (1u << 16)

static struct rlt_pre_fd *table;
static unsigned table_size;

struct rlt_pre_gate rlt_pre_gate;

/* The block region: reserved once (MAP_NORESERVE: untouched pages cost nothing), cut by
 * `arena_next`; freed blocks on a stack whose head is (tag << 32 | index + 1), 0 when empty. */
static unsigned char *arena;
static size_t block_size;
static uint32_t arena_blocks;
static _Atomic uint32_t arena_next;
static _Atomic uint64_t free_head;
/* Address space asked for the region at most; halved until the system gives it. */
#define ARENA_MAX (1ull << 40)
/* The highest fd that ever held RLT_CONNS slots: a forked child looks no further. */
static _Atomic int conns_fd_max = -1;
static uint32_t forks; /* forks counted in this process's line, for conn->fork_seen */

/* A block for every fd the table can hold, or as many as the region holds. */
static void arena_init(unsigned fds)
{
	size_t want;

	/* blocks hold connection-scope states and RLT_CONNS slots: nothing else needs one */
	if (!rlt_pre_rules.conn_block_size && !rlt_pre_rules.n[RLT_VAR_CONNS])
		return;
	block_size = (sizeof(struct rlt_pre_sock_budgets) + rlt_pre_rules.conn_block_size + 63) &
	             ~(size_t)63;
	want = (size_t)fds * block_size;
	if (want > ARENA_MAX)
		want = ARENA_MAX - ARENA_MAX % block_size;
	for (; want >= block_size; want /= 2) {
		void *m = mmap(NULL, want, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED) {
			arena = m;
			arena_blocks = (uint32_t)(want / block_size > UINT32_MAX - 1
			                                  ? UINT32_MAX - 1
			                                  : want / block_size);
			return;
		}
	}
	rlt_pre_log(RLT_LOG_WARN, "no memory for connection blocks: connection-scope rules and "
	                          "RLT_CONNS are not applied");
}

unsigned rlt_pre_fd_slots(void)
{
	struct rlimit rl;
	unsigned n = TABLE_MIN;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t want = rl.rlim_max == RLIM_INFINITY ? TABLE_MAX : rl.rlim_max;
		if (want > n)
			n = want > TABLE_MAX ? TABLE_MAX : (unsigned)want;
	}
	return n;
}

void rlt_pre_fdtable_init(void)
{
	unsigned n = rlt_pre_fd_slots();
	void *m = mmap(NULL, (size_t)n * sizeof *table, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		rlt_pre_log(RLT_LOG_WARN, "no memory for the fd table: sockets are not throttled");
		return;
	}
	table = m;
	table_size = n;
	arena_init(n);
}

void rlt_pre_gate_open(void)
{
	rlt_pre_gate.table = table;
	rlt_pre_gate.idle = RLT_PASS_ALL & ~rlt_pre_vars_in_use;
	atomic_store_explicit(&rlt_pre_gate.size, table_size, memory_order_release);
}

struct rlt_pre_fd *rlt_pre_fd_slot(int fd)
{
	if (fd < 0 || (unsigned)fd >= table_size)
		return NULL;
	return &table[fd];
}

int rlt_pre_fd_of(const struct rlt_pre_fd *e)
{
	return (int)(e - table);
}

/* Which rules can apply to a socket of this family/peer: a variable whose rules all exclude the
 * family (for example unix sockets under the default family=inet) leaves the mask 0, and the
 * socket then costs no more than a file. */
static void compute_masks(struct rlt_pre_fd *e)
{
	unsigned pass = 0;

	rlt__match_socket(&rlt_pre_rules, &e->peer, e->af, e->mask);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		/* a datagram socket with no peer learns its rules from each call's address
		 * (rlt_pre_mask_to, the sender of a receive): only a call can tell */
		if (!e->mask[v] && !(e->type != SOCK_STREAM && !e->peer.af && rlt_pre_rules.n[v]))
			pass |= RLT_PASS(v);
	atomic_store_explicit(&e->pass, (uint8_t)pass, memory_order_release);
}

static void set_entry(struct rlt_pre_fd *e, int af, int type, int nonblock)
{
	atomic_store_explicit(&e->pass, 0, memory_order_relaxed);
	atomic_store_explicit(&e->kind, RLT_FD_UNKNOWN, memory_order_relaxed);
	e->type = (uint8_t)type;
	e->af = af;
	e->nonblock = (uint8_t)nonblock;
	e->listening = 0;
	atomic_store_explicit(&e->unheld, 0, memory_order_relaxed);
	atomic_store_explicit(&e->until, 0, memory_order_relaxed);
	e->local_port = 0;
	memset(&e->peer, 0, sizeof e->peer);
	e->conn = NULL;
	e->ofd = 0;
	compute_masks(e);
	atomic_store_explicit(&e->kind, RLT_FD_SOCKET, memory_order_release);
}

/* The highest fd whose entry was ever set: closing a range looks no further. */
static _Atomic int fd_top = -1;

static void note_top(int fd)
{
	int top = atomic_load_explicit(&fd_top, memory_order_relaxed);
	while (fd > top && !atomic_compare_exchange_weak_explicit(&fd_top, &top, fd,
	                                                          memory_order_relaxed,
	                                                          memory_order_relaxed))
		;
}

int rlt_pre_fd_top(void)
{
	return atomic_load_explicit(&fd_top, memory_order_relaxed);
}

void rlt_pre_fd_new_socket(int fd, int af, int type, int nonblock)
{
	struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
	if (!e)
		return;
	rlt_pre_fd_forget(fd);
	note_top(fd);
	set_entry(e, af, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), nonblock);
}

/* A never-seen fd: a socket inherited across exec, made by a call we do not hook, or a file.
 * One system call finds out, once; the answer is kept until the fd is closed. */
static void classify(int fd, struct rlt_pre_fd *e)
{
	int type = 0, saved = errno;
	socklen_t len = sizeof type;
	struct sockaddr_storage ss;

	/* a vfork child's fd may be another file than ours under the same number */
	if (rlt_pre_borrowed())
		return;
	note_top(fd);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
		atomic_store_explicit(&e->kind, RLT_FD_OTHER, memory_order_release);
		atomic_store_explicit(&e->pass, 0xff, memory_order_release);
		errno = saved;
		return;
	}
	len = sizeof ss;
	int af = getsockname(fd, (struct sockaddr *)&ss, &len) == 0 ? ss.ss_family : 0;
	int fl = real_fcntl(fd, F_GETFL);
	set_entry(e, af, type, fl >= 0 && (fl & O_NONBLOCK));
	len = sizeof ss;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
		rlt__peer_from_sockaddr(&e->peer, (struct sockaddr *)&ss, len);
		compute_masks(e);
	}
	errno = saved;
}

struct rlt_pre_fd *rlt_pre_fd_get(int fd)
{
	struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
	if (e && atomic_load_explicit(&e->kind, memory_order_acquire) == RLT_FD_UNKNOWN)
		classify(fd, e);
	return e;
}

/* A scan, but only of a socket that was dup'd, and F_SETFL is no hot path. */
void rlt_pre_fd_set_nonblock(struct rlt_pre_fd *e, int nonblock)
{
	uint32_t id = e->ofd;
	int top = rlt_pre_fd_top();

	e->nonblock = (uint8_t)nonblock;
	if (!id)
		return;
	for (int fd = 0; fd <= top && (unsigned)fd < table_size; fd++)
		if (table[fd].ofd == id &&
		    atomic_load_explicit(&table[fd].kind, memory_order_acquire) == RLT_FD_SOCKET)
			table[fd].nonblock = (uint8_t)nonblock;
}

void rlt_pre_fd_set_peer(int fd, const struct rlt__peer *peer)
{
	struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
	if (!e || atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET)
		return;
	e->peer = *peer;
	compute_masks(e);
}

static void conn_put(struct rlt_pre_sock_budgets *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	if (c->conns_mask)
		rlt__conns_release_peer(&rlt_pre_rules, c->conns_mask, &c->conns_peer);
	c->conns_mask = 0;
	uint32_t idx = (uint32_t)(((unsigned char *)c - arena) / block_size);
	uint64_t head = atomic_load(&free_head), next;
	do {
		atomic_store_explicit(&c->next, (uint32_t)head, memory_order_relaxed);
		next = ((head >> 32) + 1) << 32 | (idx + 1);
	} while (!atomic_compare_exchange_weak(&free_head, &head, next));
}

/* Another fd of e's socket (-1: none): the one its queued connections go to when fd closes. */
static int other_copy(int fd, const struct rlt_pre_fd *e)
{
	int top = rlt_pre_fd_top();

	if (!e->ofd)
		return -1;
	for (int o = 0; o <= top && (unsigned)o < table_size; o++)
		if (o != fd && table[o].ofd == e->ofd &&
		    atomic_load_explicit(&table[o].kind, memory_order_acquire) == RLT_FD_SOCKET)
			return o;
	return -1;
}

int rlt_pre_fd_same_file(int a, int b)
{
	struct rlt_pre_fd *x = rlt_pre_fd_slot(a), *y = rlt_pre_fd_slot(b);

	return a == b || (x && y && x->ofd && x->ofd == y->ofd);
}

void rlt_pre_fd_forget(int fd)
{
	struct rlt_pre_fd *e = rlt_pre_fd_slot(fd);
	if (!e)
		return;
	if (e->listening && atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed) &&
	    atomic_load_explicit(&e->kind, memory_order_relaxed) == RLT_FD_SOCKET) {
		/* a listener's connections waiting in our queue are its socket's, not its fd's:
		 * a dup that stays open takes them, as it keeps the kernel's backlog */
		int to = other_copy(fd, e);
		if (to >= 0) {
			table[to].listening = 1;
			table[to].local_port = e->local_port;
			rlt_pre_acceptq_moved(fd, to);
		}
	}
	struct rlt_pre_sock_budgets *c = e->conn;
	int sock = atomic_load_explicit(&e->kind, memory_order_relaxed) == RLT_FD_SOCKET &&
	           atomic_exchange_explicit(&e->registered, 0, memory_order_relaxed);
	e->conn = NULL;
	atomic_store_explicit(&e->pass, 0, memory_order_release);
	atomic_store_explicit(&e->kind, RLT_FD_UNKNOWN, memory_order_release);
	if (c)
		conn_put(c);
	if (sock) /* it had epoll registrations */
		rlt_pre_fd_regs_closed(fd);
	rlt_pre_acceptq_forget(fd);
}

/* fd may hold RLT_CONNS slots: a fork's child looks up to it (rlt_pre_fdtable_conns_held). */
static void conns_at(int fd)
{
	int max = atomic_load_explicit(&conns_fd_max, memory_order_relaxed);

	while (fd > max && !atomic_compare_exchange_weak_explicit(&conns_fd_max, &max, fd,
	                                                          memory_order_relaxed,
	                                                          memory_order_relaxed))
		;
}

void rlt_pre_fd_dup(int oldfd, int newfd)
{
	struct rlt_pre_fd *from = rlt_pre_fd_get(oldfd), *to = rlt_pre_fd_slot(newfd);
	rlt_pre_net_dup(oldfd, newfd);
	if (!to || newfd == oldfd)
		return;
	rlt_pre_fd_forget(newfd);
	if (!from || atomic_load(&from->kind) != RLT_FD_SOCKET)
		return;
	note_top(newfd);
	atomic_store_explicit(&to->kind, RLT_FD_UNKNOWN, memory_order_relaxed);
	to->type = from->type;
	to->af = from->af;
	to->nonblock = from->nonblock;
	to->listening = from->listening;
	atomic_store_explicit(&to->unheld, atomic_load(&from->unheld), memory_order_relaxed);
	atomic_store_explicit(&to->until, atomic_load(&from->until), memory_order_relaxed);
	to->local_port = from->local_port;
	to->peer = from->peer;
	memcpy(to->mask, from->mask, sizeof to->mask);
	/* an id for the open file, so that O_NONBLOCK set through one fd reaches the others */
	if (!from->ofd) {
		static _Atomic uint32_t ofd_next;
		uint32_t id = atomic_fetch_add_explicit(&ofd_next, 1, memory_order_relaxed) + 1;
		from->ofd = id ? id : 1;
	}
	to->ofd = from->ofd;
	to->conn = from->conn;
	if (to->conn) {
		atomic_fetch_add(&to->conn->refs, 1);
		/* a copy above the fds that took the slots, the original then closed: the child
		 * of a fork must still find the connection */
		if (to->conn->conns_mask)
			conns_at(newfd);
	}
	atomic_store_explicit(&to->pass, atomic_load_explicit(&from->pass, memory_order_acquire),
	                      memory_order_release);
	atomic_store_explicit(&to->kind, RLT_FD_SOCKET, memory_order_release);
}

/*
 * A new block: a freed one, or a fresh one cut from the region. The pop reads the next index
 * of a block that another thread (or a signal handler) may be popping and reusing at the same
 * time; the memory is never unmapped, so the read is harmless, and the tag in the head makes
 * a CAS based on such a stale read fail.
 */
static struct rlt_pre_sock_budgets *conn_new(void)
{
	struct rlt_pre_sock_budgets *c = NULL;
	uint64_t head = atomic_load(&free_head);

	if (!arena)
		return NULL;
	while ((uint32_t)head) {
		struct rlt_pre_sock_budgets *top =
			(struct rlt_pre_sock_budgets *)(arena + (size_t)((uint32_t)head - 1) * block_size);
		uint32_t below = atomic_load_explicit(&top->next, memory_order_relaxed);
		if (atomic_compare_exchange_weak(&free_head, &head,
		                                 ((head >> 32) + 1) << 32 | below)) {
			c = top;
			break;
		}
	}
	if (!c) {
		uint32_t i = atomic_load_explicit(&arena_next, memory_order_relaxed);
		do
			if (i >= arena_blocks)
				return NULL;
		while (!atomic_compare_exchange_weak(&arena_next, &i, i + 1));
		c = (struct rlt_pre_sock_budgets *)(arena + (size_t)i * block_size);
	}
	atomic_store(&c->refs, 1);
	c->conns_mask = 0;
	atomic_store_explicit(&c->next, 0, memory_order_relaxed);
	rlt__conn_block_init(&rlt_pre_rules, c->states);
	return c;
}

/* A signal handler's first I/O on this socket may come between our check and our store (or
 * ours inside its): one block wins, the other goes back. */
struct rlt_pre_sock_budgets *rlt_pre_fd_budgets(struct rlt_pre_fd *e)
{
	struct rlt_pre_sock_budgets *c = __atomic_load_n(&e->conn, __ATOMIC_ACQUIRE), *none = NULL;

	if (c)
		return c;
	c = conn_new();
	if (c && !__atomic_compare_exchange_n(&e->conn, &none, c, 0, __ATOMIC_ACQ_REL,
	                                      __ATOMIC_ACQUIRE)) {
		conn_put(c);
		c = none;
	}
	return c;
}

void rlt_pre_fd_conns_hold(int fd, struct rlt_pre_sock_budgets *c, uint32_t mask,
                           const struct rlt__peer *peer)
{
	c->conns_peer = *peer;
	c->conns_mask = mask;
	conns_at(fd);
}

void rlt_pre_fdtable_conns_held(uint32_t held[RLT_MAX_RULES_PER_VAR])
{
	int max = atomic_load_explicit(&conns_fd_max, memory_order_relaxed);

	memset(held, 0, RLT_MAX_RULES_PER_VAR * sizeof *held);
	forks++;
	for (int fd = 0; fd <= max && (unsigned)fd < table_size; fd++) {
		struct rlt_pre_fd *e = &table[fd];
		struct rlt_pre_sock_budgets *c = e->conn;
		if (atomic_load_explicit(&e->kind, memory_order_acquire) != RLT_FD_SOCKET || !c ||
		    !c->conns_mask || c->fork_seen == forks)
			continue;
		c->fork_seen = forks;
		for (unsigned i = 0; i < RLT_MAX_RULES_PER_VAR; i++)
			if (c->conns_mask & (1u << i))
				held[i]++;
	}
}
