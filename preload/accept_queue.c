/*
 * accept_queue.c: the connections waiting for the client-dependent accept rules
 * (accept_queue.h). A fixed table, no allocation: each slot is claimed and given back by one
 * compare-and-swap of its state, so threads accepting on one listener never take one
 * connection twice. Not on any call's way unless such a rule is short.
 */
#include "accept_queue.h"
#include "real.h"

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

struct slot {
	_Atomic int state;
	int lfd;
	struct rlt_pre_queued q;
};

static struct slot slots[RLT_PRE_ACCEPTQ_MAX];
_Atomic int rlt_pre_acceptq_count;

int rlt_pre_acceptq_put(int lfd, const struct rlt_pre_queued *q)
{
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++) {
		int free = SLOT_FREE;
		if (!atomic_compare_exchange_strong_explicit(&slots[i].state, &free, SLOT_BUSY,
		                                             memory_order_acquire,
		                                             memory_order_relaxed))
			continue;
		slots[i].lfd = lfd;
		slots[i].q = *q;
		atomic_fetch_add_explicit(&rlt_pre_acceptq_count, 1, memory_order_relaxed);
		atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
		return 0;
	}
	return -1;
}

/* Claims slot i when it is ready (SLOT_BUSY then): 1, or 0. */
static int claim(int i)
{
	int ready = SLOT_READY;
	return atomic_compare_exchange_strong_explicit(&slots[i].state, &ready, SLOT_BUSY,
	                                               memory_order_acquire, memory_order_relaxed);
}

static void release(int i)
{
	atomic_fetch_sub_explicit(&rlt_pre_acceptq_count, 1, memory_order_relaxed);
	atomic_store_explicit(&slots[i].state, SLOT_FREE, memory_order_release);
}

/* The slot of lfd due first (-1: none waits). Read without a claim: a slot being filled or
 * taken is skipped, and what is read is checked again under the claim. */
static int first_of(int lfd)
{
	int best = -1;

	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++)
		if (atomic_load_explicit(&slots[i].state, memory_order_acquire) == SLOT_READY &&
		    (lfd < 0 || slots[i].lfd == lfd) && (best < 0 || slots[i].q.due < slots[best].q.due))
			best = i;
	return best;
}

int rlt_pre_acceptq_take(int lfd, rlt_ns_t now, struct rlt_pre_queued *q)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return 0;
	/* bounded: each round another thread took the slot found */
	for (int round = 0; round < RLT_PRE_ACCEPTQ_MAX; round++) {
		int i = first_of(lfd);
		if (i < 0 || slots[i].q.due > now)
			return 0;
		if (!claim(i))
			continue;
		if (slots[i].lfd != lfd) {
			atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
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
			atomic_store_explicit(&slots[i].state, SLOT_READY, memory_order_release);
			continue;
		}
		release(i);
	}
}

void rlt_pre_acceptq_forked(void)
{
	if (!atomic_load_explicit(&rlt_pre_acceptq_count, memory_order_relaxed))
		return;
	/* the child's one thread: a slot another thread of the parent was filling or taking
	 * holds no fd of the child's to close */
	for (int i = 0; i < RLT_PRE_ACCEPTQ_MAX; i++) {
		if (atomic_load_explicit(&slots[i].state, memory_order_relaxed) == SLOT_READY)
			real_close(slots[i].q.fd);
		atomic_store_explicit(&slots[i].state, SLOT_FREE, memory_order_relaxed);
	}
	atomic_store_explicit(&rlt_pre_acceptq_count, 0, memory_order_relaxed);
}
