/*
 * accept_queue.c: the connections waiting for the client-dependent accept rules
 * (accept_queue.h). A fixed table, no allocation: each slot is claimed and given back by one
 * compare-and-swap of its state, so threads accepting on one listener never take one
 * connection twice. Not on any call's way unless such a rule is short.
 *
 * A connection's due time is a hint: the rules are asked again before it is taken (another
 * connection of its key, another thread or process, may have taken the budget: it is re-timed,
 * not charged, so the statistics count it once, when it is handed over), and every connection
 * is re-timed after a set of the accept rules (a raised rate must not leave it waiting for the
 * old one).
 */
#include "accept_queue.h"
#include "fdtable.h"
#include "load.h"
#include "ready.h"
#include "real.h"

/* A slot is FILLING while put writes it (what it holds is not read), CLAIMED while one thread
 * looks at or takes its connection (the fd in it is valid). */
enum { SLOT_FREE, SLOT_FILLING, SLOT_CLAIMED, SLOT_READY };

struct slot {
	_Atomic int state;
	int lfd;
	struct rlt_pre_queued q;
};

static struct slot slots[RLT_PRE_ACCEPTQ_MAX];
_Atomic int rlt_pre_acceptq_count;
static _Atomic uint64_t next_seq;
/* The accept rules' versions the queue was last timed under (rules_now). */
static _Atomic uintptr_t timed_under;

rlt_ns_t rlt_pre_acceptq_timed(const struct rlt_pre_queued *q, rlt_ns_t now)
{
	return q->amask ? rlt__ready_at(&rlt_pre_rules, RLT_VAR_ACCEPT, q->amask, NULL, &q->kp, now)
	                : now;
}

int rlt_pre_acceptq_put(int lfd, const struct rlt_pre_queued *q)
{
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++) {
		int free = SLOT_FREE;
		if (!atomic_compare_exchange_strong_explicit(&slots[i].state, &free, SLOT_FILLING,
		                                             memory_order_acquire,
		                                             memory_order_relaxed))
			continue;
		slots[i].lfd = lfd;
		slots[i].q = *q;
		if (!q->seq) /* a connection put back keeps its place */
			slots[i].q.seq = atomic_fetch_add_explicit(&next_seq, 1, memory_order_relaxed) + 1;
		atomic_fetch_add_explicit(&rlt_pre_acceptq_count, 1, memory_order_relaxed);
		atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
		return 0;
	}
	return -1;
}

/* Claims slot i when it is ready (SLOT_CLAIMED then): 1, or 0. */
static int claim(int i)
{
	int ready = SLOT_READY;
	return atomic_compare_exchange_strong_explicit(&slots[i].state, &ready, SLOT_CLAIMED,
	                                               memory_order_acquire, memory_order_relaxed);
}

static void release(int i)
{
	atomic_fetch_sub_explicit(&rlt_pre_acceptq_count, 1, memory_order_relaxed);
	atomic_store_explicit(&slots[i].state, SLOT_FREE, memory_order_release);
}

/* A claimed slot back in the queue. */
static void unclaim(int i)
{
	atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
}

/* Whether slot i waits on listener lfd's socket (lfd < 0: any): its fd, or a dup of it. */
static int of_listener(int i, int lfd)
{
	return lfd < 0 || slots[i].lfd == lfd || rlt_pre_fd_same_file(slots[i].lfd, lfd);
}

/* Which versions of the accept rules are in force: a set makes another. */
static uintptr_t rules_now(void)
{
	uintptr_t h = 0;

	for (unsigned i = 0; i < rlt_pre_rules.n[RLT_VAR_ACCEPT]; i++)
		h = h * 31 + (uintptr_t)rlt__ver(&rlt_pre_rules.rules[RLT_VAR_ACCEPT][i]);
	return h;
}

/* After a set of the accept rules, every waiting connection is timed again under them. */
static void follow_sets(rlt_ns_t now)
{
	uintptr_t v = rules_now(), was = atomic_load_explicit(&timed_under, memory_order_relaxed);

	if (v == was ||
	    !atomic_compare_exchange_strong_explicit(&timed_under, &was, v, memory_order_relaxed,
	                                             memory_order_relaxed))
		return;
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++)
		if (claim(i)) {
			slots[i].q.due = rlt_pre_acceptq_timed(&slots[i].q, now);
			unclaim(i);
		}
}

/* The slot of lfd due first, the first come among equals (-1: none waits). Read without a
 * claim: a slot being filled or taken is skipped, and what is read is checked again under
 * the claim. */
static int first_of(int lfd)
{
	int best = -1;

	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++)
		if (atomic_load_explicit(&slots[i].state, memory_order_acquire) == SLOT_READY &&
		    of_listener(i, lfd) &&
		    (best < 0 || slots[i].q.due < slots[best].q.due ||
		     (slots[i].q.due == slots[best].q.due && slots[i].q.seq < slots[best].q.seq)))
			best = i;
	return best;
}

int rlt_pre_acceptq_take(int lfd, rlt_ns_t now, struct rlt_pre_queued *q)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return 0;
	follow_sets(now);
	/* bounded: each round another thread took the slot found, or the slot is timed again
	 * past now (once at the most) */
	for (int round = 0; round < 2 * RLT_PRE_ACCEPTQ_MAX; round++) {
		int i = first_of(lfd);
		if (i < 0 || slots[i].q.due > now)
			return 0;
		if (!claim(i))
			continue;
		if (!of_listener(i, lfd)) {
			unclaim(i);
			continue;
		}
		rlt_ns_t t = rlt_pre_acceptq_timed(&slots[i].q, now);
		if (t > now) {
			/* the budget went to another (of its key, thread or process): asked, not
			 * charged */
			slots[i].q.due = t;
			unclaim(i);
			continue;
		}
		*q = slots[i].q;
		release(i);
		return 1;
	}
	return 0;
}

static rlt_ns_t due_of(int lfd)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return RLT_NS_NEVER;
	follow_sets(rlt__now());
	int i = first_of(lfd);
	return i < 0 ? RLT_NS_NEVER : slots[i].q.due;
}

rlt_ns_t rlt_pre_acceptq_due(int lfd)
{
	return lfd < 0 ? RLT_NS_NEVER : due_of(lfd);
}

rlt_ns_t rlt_pre_acceptq_first_due(void)
{
	return due_of(-1);
}

void rlt_pre_acceptq_forget(int fd)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return;
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++) {
		if (atomic_load_explicit(&slots[i].state, memory_order_acquire) != SLOT_READY ||
		    (slots[i].lfd != fd && slots[i].q.fd != fd) || !claim(i))
			continue;
		if (slots[i].lfd == fd)
			real_close(slots[i].q.fd); /* the listener is gone: as its backlog would */
		else if (slots[i].q.fd != fd) {
			unclaim(i);
			continue;
		}
		release(i);
	}
}

void rlt_pre_acceptq_moved(int fd, int to)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return;
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++)
		if (atomic_load_explicit(&slots[i].state, memory_order_acquire) == SLOT_READY &&
		    slots[i].lfd == fd && claim(i)) {
			if (slots[i].lfd == fd)
				slots[i].lfd = to;
			unclaim(i);
		}
}

void rlt_pre_acceptq_forked(void)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return;
	/* the child's one thread: a slot another thread of the parent was looking at or taking
	 * holds the child's copy of a connection its program never sees (closed too); one being
	 * filled holds nothing readable yet */
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++) {
		int st = atomic_load_explicit(&slots[i].state, memory_order_relaxed);
		if (st == SLOT_READY || st == SLOT_CLAIMED)
			real_close(slots[i].q.fd);
		atomic_store_explicit(&slots[i].state, SLOT_FREE, memory_order_relaxed);
	}
	atomic_store_explicit(&rlt_pre_acceptq_count, 0, memory_order_relaxed);
}
