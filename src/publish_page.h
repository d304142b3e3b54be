/*
 * publish_page.h: what the writer (publish.c) and the reader (publish_read.c) of a published
 * page share beside its layout (publish.h). Private to those two files.
 */
#ifndef RLT_PUBLISH_PAGE_H
#define RLT_PUBLISH_PAGE_H

#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "publish.h"

/* The largest page a reader accepts: a header and every rule a process can have. */
#define PAGE_MAX (sizeof(struct rlt__pub_hdr) + RLT_PUB_MAX_RULES * sizeof(struct rlt__pub_rec))

/* Files are closed with the raw system call: in the preload, close is our own hook. */
static inline void rlt__pub_raw_close(int fd)
{
	syscall(SYS_close, fd);
}

static inline struct rlt__pub_rec *rlt__pub_rec_at(struct rlt__pub_hdr *h, unsigned k)
{
	return (struct rlt__pub_rec *)((char *)h + sizeof *h + (size_t)k * sizeof(struct rlt__pub_rec));
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* RLT_NET's counts from s to d, counter by counter (each whole; not all of one instant). */
static inline void rlt__net_counts_copy(struct rlt__net_stats *d, const struct rlt__net_stats *s)
{
	STORE(d->dropped, LOAD(s->dropped));
	STORE(d->resets, LOAD(s->resets));
	STORE(d->slices, LOAD(s->slices));
	STORE(d->refused, LOAD(s->refused));
	STORE(d->timeouts, LOAD(s->timeouts));
	STORE(d->hangs, LOAD(s->hangs));
}

#endif
