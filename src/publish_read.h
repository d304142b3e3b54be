/*
 * publish_read.h: the read side of the pages processes publish (publish.h), for `rlthrottle
 * top`, `rlthrottle stats` and `set`: finding a process's page, opening it with its checks,
 * reading a rule.
 */
#ifndef RLT_PUBLISH_READ_H
#define RLT_PUBLISH_READ_H

#include <stdint.h>
#include <sys/types.h>

#include "publish.h"

/* One rule as read from a page: a consistent copy, every field bounded. */
struct rlt__pub_rule {
	enum rlt_var var;
	unsigned index;
	struct rlt__pub_params params; /* text NUL-terminated; enums in range */
	int params_torn;               /* the writer never let go of the seqlock: params unknown */
	uint64_t calls, allowed, delayed, rejected, units, delay_ns_total, delay_ns_max, waiting;
	uint64_t keys_tracked, keys_evicted; /* key=: see struct rlt__stats */
	uint64_t open;                       /* RLT_CONNS: connections open now */
	uint64_t would_delay, would_delay_ns_total, would_delay_ns_max, would_reject; /* dry-run */
	unsigned nbusy;                      /* key=: the busiest keys, most first */
	struct rlt__pub_busy {
		char key[64]; /* as people read it: "127.0.0.2", "10.1.2.0/24", "port 8080" */
		uint64_t units, would_delay_ns, would_reject;
	} busy[RLT_PUB_BUSIEST];
	/* Units moved in each of the last RLT_PUB_HIST whole seconds, oldest first
	 * (per_sec[RLT_PUB_HIST - 1] is the second that ended last). */
	uint64_t per_sec[RLT_PUB_HIST];
};

struct rlt__pub_reader {
	int fd;
	void *map;
	size_t size;
	int writable;
	struct rlt__pub_hdr hdr; /* a validated copy of the header's fixed fields */
	unsigned nrules;         /* bounded by the size */
};

/*
 * Opens the page of process pid: only the reader's own (root: anyone's), mode 0600, of this
 * version, of a size that holds its records; rw: mapped read-write (for `set`'s control area).
 * A stale page found on the way is removed. Returns 0, -ENOENT (no live page: not a throttled
 * process of ours), -EACCES (another user's), -EPROTO (a page of another layout: a process
 * started by an older or newer rlthrottle), or another negative errno, with err saying which
 * in one line that names the pid.
 */
int rlt__pub_open(pid_t pid, int rw, struct rlt__pub_reader *rd, struct rlt_error *err);
void rlt__pub_close(struct rlt__pub_reader *rd);
/* RLT_NET as the page shows it: what the conditions did (*n), and those in force as written,
 * "; " apart, in text (NUL-terminated; "" when none, or when a set kept rewriting it). */
void rlt__pub_read_net(const struct rlt__pub_reader *rd, struct rlt__net_stats *n, char *text,
                       size_t len);
/* The control area of a page opened rw (NULL when read-only). */
void *rlt__pub_reader_ctl(struct rlt__pub_reader *rd);
/* Reads record k (< rd->nrules) into out, with its history as of `now` (CLOCK_MONOTONIC). */
void rlt__pub_read(const struct rlt__pub_reader *rd, unsigned k, rlt_ns_t now,
                   struct rlt__pub_rule *out);

/*
 * The pids of the live pages this user may read (root: every user's), at most max, ascending,
 * and (starts not NULL) each one's start time; stale pages of the reader's own are removed on
 * the way. Returns how many were found (may exceed max: only max are stored), or a negative
 * errno.
 */
int rlt__pub_list(pid_t *pids, uint64_t *starts, size_t max);

#endif
