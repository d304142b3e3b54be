/*
 * net_delay.c: the inbound delay line of a stream under RLT_NET's latency (rlthrottle(7)
 * NETWORK CONDITIONS).
 *
 * Why: left in the kernel's receive buffer until due, a stream's data moved at most one
 * receive buffer per DUR (20 MiB took 21 s under latency=100ms): the kernel's window closed
 * while the data waited. So the data is taken from the kernel as it comes, into a buffer of
 * ours, each piece stamped with its arrival (SO_TIMESTAMPNS: on TCP one stamp per read, that of
 * its last byte, so a piece is timed by its last byte; we read as soon as the kernel reports
 * data, so the piece is small when the stream is slow), and handed to the program's receives
 * only from arrival + DUR on. The sender's window stays open as long as the line has room: a
 * bulk stream keeps its throughput up to RLT_PRE_DELAY_BYTES per DUR.
 *
 * When data is taken: at every receive and every wait of the program on the socket, and in a
 * wait whenever the kernel reports the socket readable (the wait then goes on until the line's
 * head is due or the caller's timeout). The end of the stream and an error (a reset) are taken
 * the same way and reach the program after the data ahead of them, at their own due time.
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
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "clock.h"
#include "engine_lock.h"
#include "fdtable.h"
#include "hook_poll.h"
#include "io_pacing.h"
#include "net.h"
#include "net_delay.h"
#include "net_hook.h"
#include "preload.h"
#include "ready.h"
#include "real.h"
#include "wait.h"

#define LINES_MAX 256u
#define CHUNKS_MAX 8192u /* pieces held at most: past it, no more is taken until one goes */
/* Reads of one take: the kernel is emptied in a few, each as large as the room allows. */
#define READS_MAX 4

struct chunk {
	uint64_t end;  /* the line position after its last byte */
	rlt_ns_t due;  /* when it reaches the program */
};

struct line {
	_Atomic uint32_t refs;  /* fds of the process referring to it, + calls using it now */
	_Atomic uint32_t state; /* 0 free, 1 being made or freed, 2 in use */
	_Atomic uint16_t gen;   /* bumped at each making: an fd's stale id finds it changed */
	uint64_t ino;           /* the socket: dup'd fds share the line */
	struct rlt__lock lock;
	unsigned char *mem;     /* RLT_PRE_DELAY_BYTES of data, then CHUNKS_MAX chunks */
	/* positions since the line was last empty: [rd, wr) held, the ring at pos % BYTES */
	uint64_t rd, wr;
	unsigned first, count;  /* the chunks held, a ring */
	int end;                /* the stream's end taken from the kernel: 0 none, -1 EOF, errno */
	rlt_ns_t end_due;
	rlt_ns_t floor;         /* the last due time given: jitter never reorders a stream */
	uint64_t told;          /* edge-triggered waits: the due position last reported */
	int told_end;
	int unconnected;        /* the kernel said ENOTCONN: nothing to take (yet) */
	/* the waits cannot answer for it (a one-shot epoll registration, one beyond their
	 * table: fdtable.h `unheld`): nothing more is taken, the kernel keeps the rest and
	 * reports it */
	int no_take;
};

static struct line lines[LINES_MAX];

#define MEM_SIZE ((size_t)RLT_PRE_DELAY_BYTES + CHUNKS_MAX * sizeof(struct chunk))

static struct chunk *chunks(struct line *l)
{
	return (struct chunk *)(l->mem + RLT_PRE_DELAY_BYTES);
}

/* ----- the table: one line per socket ----- */

static int lock_line(struct line *l)
{
	int rc = rlt__lock_take(&l->lock);
	if (rc == RLT_LOCK_HELD || rc == RLT_LOCK_RECOVERED)
		return 0;
	return -1; /* a signal handler of the thread holding it: not now */
}

static void line_put(struct line *l)
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
static struct line *line_ref(uint32_t id)
{
	struct line *l;
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
		line_put(l);
		return NULL;
	}
	return l;
}

static uint32_t line_id(struct line *l)
{
	return (uint32_t)atomic_load(&l->gen) << 16 | (uint32_t)(l - lines + 1);
}

/* Ties e to l (a reference l has for it already); a thread that tied it first wins. */
static struct line *tie(struct rlt_pre_net_fd *e, struct line *l)
{
	uint32_t none = 0;

	if (atomic_compare_exchange_strong(&e->line, &none, line_id(l)))
		return l;
	line_put(l);
	return NULL;
}

/* The waits cannot hold fd's readiness (fdtable.h): its readiness must stay the kernel's. */
static int unheld(int fd)
{
	struct rlt_pre_fd *f = rlt_pre_fd_slot(fd);

	return f && atomic_load_explicit(&f->kind, memory_order_acquire) == RLT_FD_SOCKET &&
	       atomic_load_explicit(&f->unheld, memory_order_relaxed);
}

/* The line of e's socket (fd), with a reference for the caller: the one its fd has, one of
 * another fd of the same socket, or a new one when `make`. NULL: none. */
static struct line *line_get(int fd, struct rlt_pre_net_fd *e, int make)
{
	struct stat st;
	struct line *l = line_ref(atomic_load(&e->line));
	int saved = errno;

	if (l || !make || atomic_load(&e->line) || unheld(fd))
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
		struct line *o = &lines[i];
		if (atomic_load(&o->state) == 2 && o->ino == (uint64_t)st.st_ino &&
		    (o = line_ref(line_id(o))) != NULL) {
			if (o->ino == (uint64_t)st.st_ino && atomic_fetch_add(&o->refs, 1) &&
			    tie(e, o))
				return o; /* two references: the fd's and the caller's */
			line_put(o);
		}
	}
	for (unsigned i = 0; i < LINES_MAX; i++) {
		struct line *n = &lines[i];
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
		line_put(n); /* another thread tied e first: its line */
		return line_ref(atomic_load(&e->line));
	}
	errno = saved;
	return NULL;
}

void rlt_pre_delay_share(struct rlt_pre_net_fd *from, struct rlt_pre_net_fd *to)
{
	struct line *l = line_ref(atomic_load(&from->line));

	if (!l)
		return;
	atomic_fetch_add(&l->refs, 1); /* to's */
	tie(to, l);
	line_put(l);
}

void rlt_pre_delay_drop(struct rlt_pre_net_fd *e)
{
	uint32_t id = atomic_exchange(&e->line, 0);
	struct line *l;

	if (!id || (id & 0xffff) > LINES_MAX)
		return;
	l = &lines[(id & 0xffff) - 1];
	if (atomic_load(&l->state) == 2 && atomic_load(&l->gen) == (uint16_t)(id >> 16))
		line_put(l);
}

/* ----- taking from the kernel ----- */

static uint64_t room(const struct line *l)
{
	if (l->count >= CHUNKS_MAX || l->end || l->no_take)
		return 0;
	return RLT_PRE_DELAY_BYTES - (l->wr - l->rd);
}

static void push(struct line *l, uint64_t n, rlt_ns_t due)
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

static rlt_ns_t due_of(struct line *l, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       rlt_ns_t arrived)
{
	rlt_ns_t due = rlt__net_latency_due(c, &e->s.rng, arrived, l->floor);
	l->floor = due;
	return due;
}

/* Takes what the kernel holds, as far as the line has room (its lock held). */
static void take_in(int fd, struct line *l, struct rlt_pre_net_fd *e,
                    const struct rlt__net_cond *c)
{
	char cbuf[CMSG_SPACE(sizeof(struct timespec))];
	int saved = errno;

	if (l->no_take)
		return;
	rlt_pre_net_stamps_on(fd, e);
	for (int k = 0; k < READS_MAX; k++) {
		uint64_t want = room(l);
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
			rlt_ns_t at_ = rlt_pre_net_arrival(&m, now);
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

/* ----- handing to the program ----- */

/* The position up to which the line's data is due at now. */
static uint64_t due_end(struct line *l, rlt_ns_t now)
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
static rlt_ns_t next_due(struct line *l, rlt_ns_t now)
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
static int end_due(struct line *l, rlt_ns_t now)
{
	return l->end && l->rd == l->wr && l->end_due <= now;
}

/* Copies n bytes at line position pos into the caller's iovec from offset off. */
static void copy_out(struct line *l, uint64_t pos, size_t n, const struct iovec *iov, int cnt,
                     size_t off)
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
static void consume(struct line *l, uint64_t n)
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
static size_t give(struct line *l, rlt_ns_t now, const struct rlt_pre_net_into *into,
                   size_t off, size_t want, int peek)
{
	uint64_t avail = due_end(l, now) - l->rd;
	size_t n = avail < want ? (size_t)avail : want;

	if (!n)
		return 0;
	copy_out(l, l->rd, n, into->iov, into->cnt, off);
	if (!peek)
		consume(l, n);
	return n;
}

/* The caller's deadline from SO_RCVTIMEO (RLT_NS_NEVER: none). */
static rlt_ns_t rcv_deadline(int fd, rlt_ns_t now)
{
	struct timeval tv = {0};
	socklen_t len = sizeof tv;
	int saved = errno;

	if (getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) != 0 || (!tv.tv_sec && !tv.tv_usec)) {
		errno = saved;
		return RLT_NS_NEVER;
	}
	return now + (rlt_ns_t)tv.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)tv.tv_usec * 1000;
}

/* The flags a line serves; others (MSG_OOB, MSG_TRUNC, MSG_ERRQUEUE) go to the kernel. */
#define SERVED (MSG_PEEK | MSG_WAITALL | MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_NOSIGNAL)

int rlt_pre_delay_recv(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       size_t off, size_t len, int flags, const struct rlt_pre_net_into *into,
                       ssize_t *ret)
{
	struct line *l;

	if (!into || (flags & ~SERVED) || !(l = line_get(fd, e, 1)))
		return 0;
	int peek = (flags & MSG_PEEK) != 0, nonblock = rlt_pre_net_nonblocking(fd, flags);
	int waitall = (flags & MSG_WAITALL) && !nonblock && !peek;
	rlt_ns_t deadline = 0;
	size_t got = 0;
	int use = fd; /* a duplicate once the call waits: the fd is not the socket (io_pacing.c) */

	if (into->msg) { /* what the library asked for (the stamps) is not the program's */
		into->msg->msg_controllen = 0;
		into->msg->msg_flags = 0;
		into->msg->msg_namelen = 0;
	}
	for (;;) {
		if (lock_line(l) != 0) {
			*ret = got ? (ssize_t)got : rlt_pre_fail(EAGAIN);
			break;
		}
		rlt_ns_t now = rlt__now();
		l->no_take |= unheld(fd);
		take_in(use, l, e, c);
		if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end && !got) {
			rlt__lock_release(&l->lock);
			line_put(l);
			return 0; /* nothing held, nothing to take: the kernel answers */
		}
		got += give(l, now, into, off + got, len - got, peek);
		int ended = end_due(l, now), end = l->end;
		/* an error is told once, by the call that returns it (one that returns data first
		 * leaves it for the next); then the end, as the kernel does */
		if (ended && !peek && end > 0 && !got)
			l->end = -1;
		rlt_ns_t next = next_due(l, now);
		int full = room(l) == 0;
		rlt__lock_release(&l->lock);
		if (got == len || (got && !waitall)) {
			*ret = (ssize_t)got;
			break;
		}
		if (ended) {
			*ret = got ? (ssize_t)got : end > 0 ? rlt_pre_fail(end) : 0;
			break;
		}
		if (nonblock) {
			rlt_pre_fd_refused(fd, RLT_VAR_RECV);
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		if (!deadline)
			deadline = rcv_deadline(fd, now);
		if (use == fd) {
			int saved = errno, d = real_fcntl(fd, F_DUPFD_CLOEXEC, rlt_pre_pin_base());
			use = d >= 0 ? d : fd;
			errno = saved;
		}
		if (now >= deadline) {
			*ret = got ? (ssize_t)got : rlt_pre_fail(EAGAIN);
			break;
		}
		/* wait for the head's time, taking data as it comes while there is room */
		rlt_ns_t until = next < deadline ? next : deadline;
		struct timespec ts, *tp = NULL;
		if (until != RLT_NS_NEVER) {
			ts.tv_sec = (time_t)((until - now) / RLT_NS_PER_SEC);
			ts.tv_nsec = (long)((until - now) % RLT_NS_PER_SEC);
			tp = &ts;
		}
		struct pollfd p = {.fd = full ? -1 : use, .events = POLLIN | POLLRDHUP};
		if (real_ppoll(&p, 1, tp, NULL) < 0 && errno == EINTR) {
			*ret = got ? (ssize_t)got : -1; /* a signal: EINTR, as the kernel's */
			break;
		}
	}
	if (use != fd) {
		int saved = errno;
		real_close(use);
		errno = saved;
	}
	line_put(l);
	return 1;
}

#define SPLICE_PIECE 16384 /* a splice from a line moves this much at most (callers loop) */

int rlt_pre_delay_splice(int fd, struct rlt_pre_net_fd *e, int out, size_t len, unsigned flags,
                         ssize_t *ret)
{
	struct line *l = line_get(fd, e, 0);
	char buf[SPLICE_PIECE];

	if (!l)
		return 0;
	for (int round = 0;; round++) {
		if (lock_line(l) != 0) {
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		/* splice reads the kernel: the line must not take what it would read */
		l->no_take = 1;
		rlt_ns_t now = rlt__now();
		uint64_t avail = due_end(l, now) - l->rd;
		size_t n = avail < len ? (size_t)avail : len;
		n = n < SPLICE_PIECE ? n : SPLICE_PIECE;
		int empty = l->rd == l->wr, at_end = end_due(l, now), end = l->end;
		rlt_ns_t next = next_due(l, now);
		if (n) { /* read now, taken off once written */
			struct iovec v = {buf, n};
			struct rlt_pre_net_into in = {&v, 1, NULL};
			give(l, now, &in, 0, n, 1);
		}
		rlt__lock_release(&l->lock);
		if (empty && (!end || at_end)) {
			line_put(l);
			if (at_end && end > 0)
				return (*ret = rlt_pre_fail(end)), 1; /* a reset held till due */
			return 0; /* nothing held: the kernel's */
		}
		if (n) {
			ssize_t w = real_write(out, buf, n);
			if (w > 0 && lock_line(l) == 0) {
				consume(l, (uint64_t)w);
				rlt__lock_release(&l->lock);
			}
			*ret = w;
			break;
		}
		if ((flags & SPLICE_F_NONBLOCK) || rlt_pre_net_nonblocking(fd, 0) || round > 1000) {
			rlt_pre_fd_refused(fd, RLT_VAR_RECV);
			*ret = rlt_pre_fail(EAGAIN);
			break;
		}
		rlt__sleep_until(next); /* held, not due: a blocking splice waits for it */
	}
	line_put(l);
	return 1;
}

int rlt_pre_delay_inq(struct rlt_pre_net_fd *e, int *n)
{
	struct line *l = line_ref(atomic_load(&e->line));

	if (!l)
		return 0;
	if (lock_line(l) == 0) {
		uint64_t due = due_end(l, rlt__now()) - l->rd;
		*n = due > INT32_MAX ? INT32_MAX : (int)due;
		rlt__lock_release(&l->lock);
	} else {
		*n = 0;
	}
	line_put(l);
	return 1;
}

/* ----- the waits ----- */

/* Whether fd's receive budget (RLT_RECV) lets a receive go at now: a line's due data is
 * reported only then, or a non-blocking reader told "readable" would be refused by its budget
 * and told again at once. */
static int budget_allows(int fd, rlt_ns_t now)
{
	struct rlt_pre_fd *f = rlt_pre_fd_slot(fd);

	if (!f || atomic_load_explicit(&f->kind, memory_order_acquire) != RLT_FD_SOCKET ||
	    !f->mask[RLT_VAR_RECV])
		return 1;
	return rlt__ready_at(&rlt_pre_rules, RLT_VAR_RECV, f->mask[RLT_VAR_RECV],
	                     rlt_pre_budget_states(f), &f->peer, now) <= now;
}

int rlt_pre_delay_held(int fd, struct rlt_pre_net_fd *e, const struct rlt__net_cond *c,
                       unsigned events, rlt_ns_t now, rlt_ns_t *due, unsigned *h)
{
	struct line *l = line_get(fd, e, 1);
	unsigned in = events & (RLT_PRE_IN_EVENTS | POLLRDHUP);

	if (!l)
		return 0;
	if (lock_line(l) != 0) {
		line_put(l);
		return 0;
	}
	l->no_take |= unheld(fd);
	take_in(fd, l, e, c);
	if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end) {
		rlt__lock_release(&l->lock);
		line_put(l);
		return 0; /* not connected, or not ours to answer for: the kernel's readiness */
	}
	uint64_t end = due_end(l, now);
	int ready = (end > l->rd || end_due(l, now)) && budget_allows(fd, now) &&
	            !rlt_pre_net_in_hung(e, now);
	if (ready && (events & EPOLLET)) /* an edge: only what came due since the last told */
		ready = end > l->told || (end_due(l, now) && !l->told_end);
	rlt_ns_t next = next_due(l, now);
	int full = room(l) == 0, err = l->end > 0 && !end_due(l, now);
	rlt__lock_release(&l->lock);
	line_put(l);
	*h = RLT_PRE_NET_OWN | in;
	if (ready) {
		*h |= RLT_PRE_NET_READY;
		*due = now;
		return 1;
	}
	if (next < *due)
		*due = next;
	if (err) /* a reset taken early: its hang-up and error are held whole till due */
		*h |= RLT_PRE_HELD_WHOLE | (events & RLT_PRE_OUT_EVENTS);
	else if (!full)
		*h |= RLT_PRE_NET_WATCH;
	return 1;
}

/* The receive events a socket with a line reports: its due data or end (the kernel's report
 * of them is data for the line: taken). `asked`: the events asked; `got`: the kernel's. -1:
 * not a socket with a line. */
static int line_revents(int fd, unsigned asked, unsigned got, rlt_ns_t now, int et_tell)
{
	struct rlt_pre_net_fd *e;
	const struct rlt__net_set *set;
	const struct rlt__net_cond *c;
	struct line *l;
	const unsigned in_side = RLT_PRE_IN_EVENTS | POLLRDHUP | POLLHUP | POLLERR;

	if (fd < 0 || (unsigned)fd >= rlt_pre_net_tab_n)
		return -1;
	e = &rlt_pre_net_tab[fd];
	if (!atomic_load_explicit(&e->line, memory_order_acquire) || !(l = line_ref(atomic_load(&e->line))))
		return -1;
	if (lock_line(l) != 0) {
		line_put(l);
		return (int)got;
	}
	if ((got & in_side) && (set = rlt_pre_net_conditions(e)) &&
	    (c = rlt__net_find(set, &e->s, RLT_NET_LATENCY, RLT_NET_IN)))
		take_in(fd, l, e, c);
	if ((l->unconnected || l->no_take) && l->rd == l->wr && !l->end) {
		rlt__lock_release(&l->lock);
		line_put(l);
		return -1; /* not connected, or not ours to answer for: the kernel's answer */
	}
	uint64_t end = due_end(l, now);
	int at_end = end_due(l, now);
	int ready = (end > l->rd || at_end) && budget_allows(fd, now) && !rlt_pre_net_in_hung(e, now);
	if (et_tell && ready) {
		l->told = end;
		l->told_end = at_end;
	}
	int err = l->end > 0 && !at_end;
	rlt__lock_release(&l->lock);
	line_put(l);
	if (!(asked & RLT_PRE_IN_EVENTS))
		return (int)(err ? 0 : got);
	if (ready)
		return (int)(got | (asked & RLT_PRE_IN_EVENTS) | (at_end ? asked & POLLRDHUP : 0));
	return (int)(err ? 0 : got & ~in_side);
}

int rlt_pre_delay_polled(struct pollfd *fds, nfds_t n, int rc)
{
	rlt_ns_t now = rlt__now();
	int saved = errno, count = 0;

	if (rc < 0)
		return rc;
	for (nfds_t i = 0; i < n; i++) {
		int r = fds[i].fd < 0 ? -1
		                      : line_revents(fds[i].fd, (unsigned)fds[i].events,
		                                     (unsigned short)fds[i].revents, now, 0);
		if (r >= 0)
			fds[i].revents = (short)r;
		count += fds[i].revents != 0;
	}
	errno = saved;
	return count;
}

int rlt_pre_delay_selected(int nfds, fd_set *r, fd_set *w, fd_set *x, const fd_set *asked,
                           int rc)
{
	rlt_ns_t now = rlt__now();
	int saved = errno, count = 0;

	if (rc < 0)
		return rc;
	for (int fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		if (r && FD_ISSET(fd, asked)) {
			int v = line_revents(fd, POLLIN, FD_ISSET(fd, r) ? POLLIN : 0, now, 0);
			if (v >= 0 && (v & POLLIN))
				FD_SET(fd, r);
			else if (v >= 0)
				FD_CLR(fd, r);
		}
		count += (r && FD_ISSET(fd, r)) + (w && FD_ISSET(fd, w)) + (x && FD_ISSET(fd, x));
	}
	errno = saved;
	return count;
}

unsigned rlt_pre_delay_round_add(struct rlt_pre_delay_round *r, int fd, uint32_t events,
                                 uint64_t data, unsigned h)
{
	if (!r) /* held as a wait holds it; the wait's own round answers for it */
		return h & ~RLT_PRE_NET_MARKS;
	if (r->n >= RLT_PRE_DELAY_ROUND_MAX) /* not watched: the kernel tells, the receive sorts */
		return h & ~(RLT_PRE_NET_MARKS | RLT_PRE_IN_EVENTS | POLLRDHUP);
	r->s[r->n].fd = fd;
	r->s[r->n].events = events;
	r->s[r->n].data = data;
	r->s[r->n++].h = h;
	return h & ~RLT_PRE_NET_MARKS;
}

/* The kernel's events of an epoll round: those of a socket with a line get the line's answer
 * (dropped when none is left); the count. */
static int epoll_filter(struct epoll_event *evs, int rc, struct rlt_pre_delay_round *r,
                        rlt_ns_t now)
{
	int k = 0;

	for (int i = 0; i < rc; i++) {
		unsigned j = 0;
		while (j < r->n && r->s[j].data != evs[i].data.u64)
			j++;
		if (j < r->n) {
			int v = line_revents(r->s[j].fd, r->s[j].events, evs[i].events, now,
			                     (r->s[j].events & EPOLLET) != 0);
			if (v >= 0)
				evs[i].events = (uint32_t)v;
		}
		if (evs[i].events)
			evs[k++] = evs[i];
	}
	return k;
}

int rlt_pre_delay_epoll(int epfd, struct epoll_event *evs, int max, rlt_ns_t until,
                        const sigset_t *sig, struct rlt_pre_delay_round *r)
{
	rlt_ns_t now = rlt__now();
	int placed = 0, rc;

	/* the due ones first, as the kernel would have them */
	for (unsigned j = 0; j < r->n && placed < max; j++) {
		if (!(r->s[j].h & RLT_PRE_NET_READY))
			continue;
		int v = line_revents(r->s[j].fd, r->s[j].events, 0, now,
		                     (r->s[j].events & EPOLLET) != 0);
		if (v > 0) {
			evs[placed].events = (uint32_t)v;
			evs[placed++].data.u64 = r->s[j].data;
		}
	}
	if (placed) {
		int saved = errno;
		rc = max > placed ? real_epoll_pwait(epfd, evs + placed, max - placed, 0, sig) : 0;
		rc = rc > 0 ? epoll_filter(evs + placed, rc, r, now) : 0;
		/* one entry per registration: the kernel's events of a placed one join it */
		int k = placed;
		for (int i = placed; i < placed + rc; i++) {
			int j = 0;
			while (j < placed && evs[j].data.u64 != evs[i].data.u64)
				j++;
			if (j < placed)
				evs[j].events |= evs[i].events;
			else
				evs[k++] = evs[i];
		}
		errno = saved;
		return k;
	}
	/* nothing due: wait on the instance and on the watched sockets, whose data the line
	 * takes as it comes */
	struct pollfd p[1 + RLT_PRE_DELAY_ROUND_MAX];
	unsigned np = 1;
	p[0] = (struct pollfd){.fd = epfd, .events = POLLIN};
	for (unsigned j = 0; j < r->n; j++)
		if (r->s[j].h & RLT_PRE_NET_WATCH)
			p[np++] = (struct pollfd){.fd = r->s[j].fd, .events = POLLIN | POLLRDHUP};
	struct timespec ts, *tp = NULL;
	if (until != RLT_NS_NEVER) {
		rlt_ns_t left = until > now ? until - now : 0;
		ts.tv_sec = (time_t)(left / RLT_NS_PER_SEC);
		ts.tv_nsec = (long)(left % RLT_NS_PER_SEC);
		tp = &ts;
	}
	rc = real_ppoll(p, np, tp, sig);
	if (rc <= 0)
		return rc;
	now = rlt__now();
	for (unsigned i = 1; i < np; i++)
		if (p[i].revents)
			line_revents(p[i].fd, POLLIN, (unsigned)p[i].revents, now, 0);
	if (!p[0].revents)
		return 0;
	rc = real_epoll_pwait(epfd, evs, max, 0, sig);
	return rc > 0 ? epoll_filter(evs, rc, r, now) : rc;
}
