/*
 * timer_heap.c: delayed answers, ordered by when they are due. A binary min-heap of jobs keyed
 * by job->deadline; each job knows its index so that one leaving early (its call ended for a
 * signal) is taken out in O(log n). The loop arms one timerfd for the top.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"

static void put(struct rlt_sup_heap *h, size_t i, struct rlt_sup_job *j)
{
	h->v[i] = j;
	j->heap_i = i;
}

static void up(struct rlt_sup_heap *h, size_t i)
{
	struct rlt_sup_job *j = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (h->v[parent]->deadline <= j->deadline)
			break;
		put(h, i, h->v[parent]);
		i = parent;
	}
	put(h, i, j);
}

static void down(struct rlt_sup_heap *h, size_t i)
{
	struct rlt_sup_job *j = h->v[i];

	for (;;) {
		size_t l = 2 * i + 1, m = i;
		rlt_ns_t best = j->deadline;
		if (l < h->n && h->v[l]->deadline < best) {
			m = l;
			best = h->v[l]->deadline;
		}
		if (l + 1 < h->n && h->v[l + 1]->deadline < best)
			m = l + 1;
		if (m == i)
			break;
		put(h, i, h->v[m]);
		i = m;
	}
	put(h, i, j);
}

int rlt_sup_heap_push(struct rlt_sup_heap *h, struct rlt_sup_job *j)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct rlt_sup_job **v = realloc(h->v, cap * sizeof *v);
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = j;
	j->heap_i = h->n++;
	up(h, j->heap_i);
	return 0;
}

void rlt_sup_heap_remove(struct rlt_sup_heap *h, struct rlt_sup_job *j)
{
	size_t i = j->heap_i;

	if (i == SIZE_MAX || i >= h->n || h->v[i] != j)
		return;
	j->heap_i = SIZE_MAX;
	if (i == --h->n)
		return;
	put(h, i, h->v[h->n]);
	if (i > 0 && h->v[(i - 1) / 2]->deadline > h->v[i]->deadline)
		up(h, i);
	else
		down(h, i);
}

struct rlt_sup_job *rlt_sup_heap_top(const struct rlt_sup_heap *h)
{
	return h->n ? h->v[0] : NULL;
}
