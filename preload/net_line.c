/*
 * net_line.c: the delay line of a stream under RLT_NET's latency (rlthrottle(7) NETWORK
 * CONDITIONS): its table, its taking from the kernel, its positions. What it hands the program
 * and what the waits see of it: net_delay.c.
 *
 * Why: left in the kernel's receive buffer until due, a stream's data moved at most one
 * receive buffer per DUR (20 MiB took 21 s under latency=100ms): the kernel's window closed
 * while the data waited. So the data is taken from the kernel as it comes, into a buffer of
 * ours, each piece stamped with its arrival (SO_TIMESTAMPNS: on TCP one stamp per read, that of
 * its last byte, so a piece is timed by its last byte; we read as soon as the kernel reports
 * data, so the piece is small when the stream is slow), and handed to the program's receives
 * only from arrival + DUR on. The sender's window stays open as long as the line has room: a
 * bulk stream keeps its throughput up to RLT_PRE_DELAY_BYTES per DUR. The end of the stream
 * and an error (a reset) are taken the same way, at their own due time after the data ahead.
 *
 * One line per socket, shared by the fds dup made of it (found by the socket's inode), freed
 * when the last of them closes. A fork's child starts with a copy of what its parent held
 * back (it is memory): the one of them that reads it gets it, as its copy of the socket. An
 * exec loses what was held (at most DUR's worth). The lines are a fixed table of mappings made
 * only for sockets under latency: nothing here runs for a call no latency matches. A line is
 * used under its lock (engine_lock.h: fork- and signal-safe); a receive or wait never sleeps
 * holding it.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "clock.h"
#include "engine_lock.h"
#include "fdtable.h"
#include "net.h"
#include "net_hook.h"
#include "net_latency.h"
#include "net_line.h"

#define LINES_MAX 256u
#define CHUNKS_MAX 8192u /* pieces held at most: past it, no more is taken until one goes */
/* Reads of one take: the kernel is emptied in a few, each as large as the room allows. */
#define READS_MAX 4

struct chunk {
	uint64_t end;  /* the line position after its last byte */
	rlt_ns_t due;  /* when it reaches the program */
};

static struct rlt_pre_line lines[LINES_MAX];

#define MEM_SIZE ((size_t)RLT_PRE_DELAY_BYTES + CHUNKS_MAX * sizeof(struct chunk))

static struct chunk *chunks(struct rlt_pre_line *l)
{
	return (struct chunk *)(l->mem + RLT_PRE_DELAY_BYTES);
}

/* ----- the table: one line per socket ----- */

int rlt_pre_line_lock(struct rlt_pre_line *l)
{
	int rc = rlt__lock_take(&l->lock);
	if (rc == RLT_LOCK_HELD || rc == RLT_LOCK_RECOVERED)
		return 0;
	return -1; /* a signal handler of the thread holding it: not now */
}

void rlt_pre_line_put(struct rlt_pre_line *l)
{
	uint32_t in_use = 2;

	if (atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	/* the last: freed (state 1 while the mapping goes, so no one finds it half gone) */
	if (!atomic_compare_exchange_strong(&l->state, &in_use, 1))
		return;
	munmap(l->mem, MEM_SIZE);
	l->mem = NULL;
	atomic_store_explicit(&l->state, 0, memory_order_release);
}

/* A reference to the line of id (an fd's), or NULL if it changed since. */
struct rlt_pre_line *rlt_pre_line_ref(uint32_t id)
{
	struct rlt_pre_line *l;
	uint32_t r;

	if (!id || (id & 0xffff) > LINES_MAX)
		return NULL;
	l = &lines[(id & 0xffff) - 1];
	r = atomic_load(&l->refs);
	do
		if (r == 0)
			return NULL;
	while (!atomic_compare_exchange_weak(&l->refs, &r, r + 1));
	if (atomic_load(&l->state) != 2 || atomic_load(&l->gen) != (uint16_t)(id >> 16)) {
		rlt_pre_line_put(l);
		return NULL;
	}
	return l;
}

static uint32_t line_id(struct rlt_pre_line *l)
{
	return (uint32_t)atomic_load(&l->gen) << 16 | (uint32_t)(l - lines + 1);
}

/* Ties e to l (a reference l has for it already); a thread that tied it first wins. */
static struct rlt_pre_line *tie(struct rlt_pre_net_fd *e, struct rlt_pre_line *l)
{
	uint32_t none = 0;

	if (atomic_compare_exchange_strong(&e->line, &none, line_id(l)))
		return l;
	rlt_pre_line_put(l);
	return NULL;
}

/* The waits cannot hold fd's readiness (fdtable.h): its readiness must stay the kernel's. */
int rlt_pre_line_unheld(int fd)
{
	struct rlt_pre_fd *f = rlt_pre_fd_slot(fd);

	return f && atomic_load_explicit(&f->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	       atomic_load_explicit(&f->unheld, memory_order_relaxed);
}

/* The line of e's socket (fd), with a reference for the caller: the one its fd has, one of
 * another fd of the same socket, or a new one when `make`. NULL: none. */
struct rlt_pre_line *rlt_pre_line_get(int fd, struct rlt_pre_net_fd *e, int make)
{
	struct stat st;
	struct rlt_pre_line *l = rlt_pre_line_ref(atomic_load(&e->line));
	int saved = errno;

	if (l || !make || atomic_load(&e->line) || rlt_pre_line_unheld(fd))
		return l;
	int listening = 0;
	socklen_t ll = sizeof listening;
	/* a listener has no data: its readiness is its connections', the kernel's */
	if (fstat(fd, &st) != 0 ||
	    (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) == 0 && listening)) {
		errno = saved;
		return NULL;
	}
	for (unsigned i = 0; i < LINES_MAX; i++) {
		struct rlt_pre_line *o = &lines[i];
		if (atomic_load(&o->state) == 2 && o->ino == (uint64_t)st.st_ino &&
		    (o = rlt_pre_line_ref(line_id(o))) != NULL) {
			if (o->ino == (uint64_t)st.st_ino && atomic_fetch_add(&o->refs, 1) &&
			    tie(e, o))
				return o; /* two references: the fd's and the caller's */
			rlt_pre_line_put(o);
		}
	}
	for (unsigned i = 0; i < LINES_MAX; i++) {
		struct rlt_pre_line *n = &lines[i];
		uint32_t free_ = 0;
		if (atomic_load(&n->state) != 0 || !atomic_compare_exchange_strong(&n->state, &free_, 1))
			continue;
		void *m = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			atomic_store(&n->state, 0);
			break;
		}
		n->mem = m;
		n->ino = (uint64_t)st.st_ino;
		n->rd = n->wr = 0;
		n->first = n->count = 0;
		n->end = 0;
		n->end_due = n->floor = 0;
		n->told = 0;
		n->told_end = 0;
		n->unconnected = 0;
		n->no_take = 0;
		rlt__lock_init(&n->lock, 0);
		atomic_fetch_add(&n->gen, 1);
		atomic_store(&n->refs, 2); /* the fd's and the caller's */
		atomic_store(&n->state, 2);
		errno = saved;
		if (tie(e, n))
			return n;
		rlt_pre_line_put(n); /* another thread tied e first: its line */
		return rlt_pre_line_ref(atomic_load(&e->line));
	}
	errno = saved;
	return NULL;
}

void rlt_pre_line_share(struct rlt_pre_net_fd *from, struct rlt_pre_net_fd *to)
{
	struct rlt_pre_line *l = rlt_pre_line_ref(atomic_load(&from->line));

	if (!l)
		return;
	atomic_fetch_add(&l->refs, 1); /* to's */
	tie(to, l);
	rlt_pre_line_put(l);
}

void rlt_pre_line_drop(struct rlt_pre_net_fd *e)
{
	uint32_t id = atomic_exchange(&e->line, 0);
	struct rlt_pre_line *l;

	if (!id || (id & 0xffff) > LINES_MAX)
		return;
	l = &lines[(id & 0xffff) - 1];
	if (atomic_load(&l->state) == 2 && atomic_load(&l->gen) == (uint16_t)(id >> 16))
		rlt_pre_line_put(l);
}

/* ----- taking from the kernel ----- */

uint64_t rlt_pre_line_room(const struct rlt_pre_line *l)
{
	if (l->count >= CHUNKS_MAX || l->end || l->no_take)
		return 0;
	return RLT_PRE_DELAY_BYTES - (l->wr - l->rd);
}

static void push(struct rlt_pre_line *l, uint64_t n, rlt_ns_t due)
{
	struct chunk *c = chunks(l);

	l->wr += n;
	if (l->count) {
		struct chunk *last = &c[(l->first + l->count - 1) % CHUNKS_MAX];
		if (last->due == due) { /* one piece with it: no chunk more */
			last->end = l->wr;
			return;
		}
	}
	c[(l->first + l->count) % CHUNKS_MAX] = (struct chunk){l->wr, due};
	l->count++;
}

static rlt_ns_t due_of(struct rlt_pre_line *l, struct rlt_pre_net_fd *e,
                       const struct rlt__net_cond *c, rlt_ns_t arrived)
{
	rlt_ns_t due = rlt__net_latency_due(c, &e->s.rng, arrived, l->floor);
	l->floor = due;
	return due;
}

/* Takes what the kernel holds, as far as the line has room (its lock held). */
void rlt_pre_line_take(int fd, struct rlt_pre_line *l, struct rlt_pre_net_fd *e,
                       const struct rlt__net_cond *c)
{
	char cbuf[CMSG_SPACE(sizeof(struct timespec))];
	int saved = errno;

	if (l->no_take)
		return;
	rlt_pre_latency_stamps_on(fd, e);
	for (int k = 0; k < READS_MAX; k++) {
		uint64_t want = rlt_pre_line_room(l);
		if (!want)
			break;
		size_t at = (size_t)(l->wr % RLT_PRE_DELAY_BYTES);
		size_t first = RLT_PRE_DELAY_BYTES - at < want ? RLT_PRE_DELAY_BYTES - at : (size_t)want;
		struct iovec iov[2] = {{l->mem + at, first}, {l->mem, (size_t)want - first}};
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = want > first ? 2 : 1,
		                   .msg_control = cbuf, .msg_controllen = sizeof cbuf};
		ssize_t n = rlt_pre_true_recvmsg(fd, &m, MSG_DONTWAIT);
		rlt_ns_t now = rlt__now();
		l->unconnected = n < 0 && errno == ENOTCONN;
		if (l->unconnected)
			break; /* not connected yet (or a listener now): the kernel answers */
		if (n > 0) {
			rlt_ns_t at_ = rlt_pre_latency_arrival(&m, now);
			push(l, (uint64_t)n, due_of(l, e, c, at_ ? at_ : now));
			if ((uint64_t)n < want)
				break; /* the kernel is empty */
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			break;
		/* the end, or an error (a reset): after the data ahead of it, DUR after now */
		l->end = n == 0 ? -1 : errno;
		l->end_due = due_of(l, e, c, now);
		break;
	}
	errno = saved;
}

/* ----- its positions: what is due, handed on ----- */

/* The position up to which the line's data is due at now. */
uint64_t rlt_pre_line_due_end(struct rlt_pre_line *l, rlt_ns_t now)
{
	struct chunk *c = chunks(l);
	uint64_t end = l->rd;

	for (unsigned i = 0; i < l->count; i++) {
		struct chunk *k = &c[(l->first + i) % CHUNKS_MAX];
		if (k->due > now)
			break;
		end = k->end;
	}
	return end;
}

/* When the line's next thing not due at now is (its head chunk beyond due, or its end);
 * RLT_NS_NEVER: nothing waits. */
rlt_ns_t rlt_pre_line_next_due(struct rlt_pre_line *l, rlt_ns_t now)
{
	struct chunk *c = chunks(l);

	for (unsigned i = 0; i < l->count; i++) {
		struct chunk *k = &c[(l->first + i) % CHUNKS_MAX];
		if (k->due > now)
			return k->due;
	}
	if (l->end && l->end_due > now)
		return l->end_due;
	return RLT_NS_NEVER;
}

/* The end is due and nothing is ahead of it. */
int rlt_pre_line_end_due(struct rlt_pre_line *l, rlt_ns_t now)
{
	return l->end && l->rd == l->wr && l->end_due <= now;
}

/* Copies n bytes at line position pos into the caller's iovec from offset off. */
static void copy_out(struct rlt_pre_line *l, uint64_t pos, size_t n, const struct iovec *iov,
                     int cnt, size_t off)
{
	for (int i = 0; i < cnt && n; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		size_t put = iov[i].iov_len - off < n ? iov[i].iov_len - off : n;
		size_t done = 0;
		while (done < put) {
			size_t at = (size_t)((pos + done) % RLT_PRE_DELAY_BYTES);
			size_t k = RLT_PRE_DELAY_BYTES - at < put - done ? RLT_PRE_DELAY_BYTES - at
			                                                 : put - done;
			memcpy((char *)iov[i].iov_base + off + done, l->mem + at, k);
			done += k;
		}
		pos += put;
		n -= put;
		off = 0;
	}
}

/* Takes n bytes off the head of the line (its lock held). */
void rlt_pre_line_consume(struct rlt_pre_line *l, uint64_t n)
{
	struct chunk *c = chunks(l);

	l->rd += n;
	while (l->count && c[l->first].end <= l->rd) {
		l->first = (l->first + 1) % CHUNKS_MAX;
		l->count--;
	}
	if (l->rd == l->wr) { /* empty: from the start again, so its pages stay few */
		l->rd = l->wr = 0;
		l->first = l->count = 0;
		l->told = 0;
	}
}

/* Hands up to want due bytes to the caller (from offset off); takes them off the line unless
 * peek. The count. */
size_t rlt_pre_line_give(struct rlt_pre_line *l, rlt_ns_t now, const struct iovec *iov, int cnt,
                         size_t off, size_t want, int peek)
{
	uint64_t avail = rlt_pre_line_due_end(l, now) - l->rd;
	size_t n = avail < want ? (size_t)avail : want;

	if (!n)
		return 0;
	copy_out(l, l->rd, n, iov, cnt, off);
	if (!peek)
		rlt_pre_line_consume(l, n);
	return n;
}
