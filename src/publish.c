/*
 * publish.c: the per-process page of rlthrottle(1) COMMANDS (see publish.h for the layout and its rules).
 *
 * Writer: made once per process (at load or in a fork's child), never resized. The hot path only counts into it (charge.c, conns.c, unchanged) and,
 * once a second, the first call that sees the new second records where each rule's units stand
 * (rlt__pub_roll): the history costs a conforming call one relaxed load and a compare. The same
 * compare ticks every RLT_PUB_CHECK_NS, which is when a charge looks for a `set` request.
 *
 * Reader: trusts nothing in the page. The file must be the reader's (root: anyone's), mode
 * 0600, not a link, of this version and of a size that holds what its header claims; every
 * count, index and enum is bounded before use, the text NUL-terminated, and a seqlock that
 * never settles gives "unknown" rather than a loop. A page can mislead a reader only about its
 * own numbers.
 *
 * Files are made with raw close (SYS_close): in the preload, close is our own hook.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conns.h"
#include "keytab.h"
#include "proc_stat.h"
#include "net.h"
#include "publish.h"
#include "publish_page.h"
#include "stats_count.h"



int rlt__pub_path(char *buf, size_t len, uid_t uid, pid_t pid, uint64_t start)
{
	int n = snprintf(buf, len, RLT_PUB_DIR RLT_PUB_PREFIX "%u-%d-%llu", (unsigned)uid, (int)pid,
	                 (unsigned long long)start);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}


static void params_of(const struct rlt_rule *r, struct rlt__pub_params *p)
{
	memset(p, 0, sizeof *p);
	p->algo = (uint32_t)r->algo;
	p->scope = (uint32_t)r->scope;
	p->action = (uint32_t)r->action;
	p->unit = (uint32_t)r->unit;
	if (r->var == RLT_VAR_CONNS) {
		p->rate_num = r->amount_num;
	} else {
		p->rate_num = r->params.rate_num;
		p->rate_den_ns = r->params.rate_den_ns;
		if (r->algo == RLT_ALGO_TOKEN || r->algo == RLT_ALGO_LEAKY)
			p->burst = r->params.burst;
	}
	p->keys = r->key != RLT_KEY_NONE ? r->keys : 0;
	p->key = (uint32_t)r->key;
	p->key_prefix4 = r->key_prefix4;
	p->key_prefix6 = r->key_prefix6;
	memcpy(p->text, r->text, sizeof p->text - 1);
}


static void stats_copy(struct rlt__stats *d, struct rlt__stats *s)
{
	STORE(d->calls, LOAD(s->calls));
	STORE(d->allowed, LOAD(s->allowed));
	STORE(d->delayed, LOAD(s->delayed));
	STORE(d->rejected, LOAD(s->rejected));
	STORE(d->units, LOAD(s->units));
	STORE(d->delay_ns_total, LOAD(s->delay_ns_total));
	STORE(d->delay_ns_max, LOAD(s->delay_ns_max));
	STORE(d->waiting, LOAD(s->waiting));
	STORE(d->keys_tracked, LOAD(s->keys_tracked));
	STORE(d->keys_evicted, LOAD(s->keys_evicted));
	STORE(d->would_delay, LOAD(s->would_delay));
	STORE(d->would_delay_ns_total, LOAD(s->would_delay_ns_total));
	STORE(d->would_delay_ns_max, LOAD(s->would_delay_ns_max));
	STORE(d->would_reject, LOAD(s->would_reject));
}

/* A new file of `size` bytes, 0600, ours alone; one of the same name (an exec in the same
 * process: same pid, same start) is replaced. */
static int make_file(const char *path, size_t size)
{
	for (int tries = 0; tries < 2; tries++) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			if (errno != EEXIST || tries)
				return -errno;
			/* only our own goes: another user's cannot be unlinked in sticky /dev/shm,
			 * and it is then left alone */
			if (unlink(path) != 0)
				return -EEXIST;
			continue;
		}
		/* the umask may have taken bits off; readers insist on exactly 0600. The pages are
		 * allocated now, not when first touched: a full /dev/shm then fails here, with a
		 * warning, instead of raising SIGBUS in whatever call touches the page first. */
		int rc = 0;
		if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size) != 0)
			rc = -errno;
		else
			rc = -posix_fallocate(fd, 0, (off_t)size);
		if (rc) {
			unlink(path);
			rlt__pub_raw_close(fd);
			return rc;
		}
		return fd;
	}
	return -EEXIST;
}

/* The next tick: RLT_PUB_CHECK_NS on, or the next second's start if sooner. */
static uint64_t next_tick(rlt_ns_t now)
{
	uint64_t sec_end = (now / RLT_NS_PER_SEC + 1) * RLT_NS_PER_SEC;
	return now + RLT_PUB_CHECK_NS < sec_end ? now + RLT_PUB_CHECK_NS : sec_end;
}

int rlt__pub_create(struct rlt__ruleset *rs, pid_t pid, struct rlt_error *err)
{
	struct rlt__proc_stat ps;
	struct rlt__pub *p;
	unsigned n = 0;
	int fd, rc;

	for (int v = 0; v < RLT_VAR_COUNT; v++)
		n += rs->n[v];
	/* nothing to show, nor to steer: RLT_NET set (even empty) is steered by `set` through
	 * the page's control area */
	if (n == 0 && !rlt__net_wanted)
		return 0;
	if (rlt__proc_stat(pid, &ps) != 0) {
		snprintf(err->msg, sizeof err->msg, "publishing: cannot read /proc/%d/stat", (int)pid);
		return -ESRCH;
	}
	p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err->msg, sizeof err->msg, "publishing: out of memory");
		return -ENOMEM;
	}
	p->size = sizeof(struct rlt__pub_hdr) + (size_t)n * sizeof(struct rlt__pub_rec);
	rlt__pub_path(p->path, sizeof p->path, geteuid(), pid, ps.start);
	fd = make_file(p->path, p->size);
	if (fd < 0) {
		snprintf(err->msg, sizeof err->msg, "publishing: cannot create %s: %s", p->path,
		         strerror(-fd));
		free(p);
		return fd;
	}
	p->hdr = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = p->hdr == MAP_FAILED ? -errno : 0;
	rlt__pub_raw_close(fd);
	if (rc) {
		unlink(p->path);
		snprintf(err->msg, sizeof err->msg, "publishing: cannot map %s: %s", p->path,
		         strerror(-rc));
		free(p);
		return rc;
	}

	struct rlt__pub_hdr *h = p->hdr;
	struct timespec wall;
	rlt_ns_t now = rlt__now();
	clock_gettime(CLOCK_REALTIME, &wall);
	h->version = RLT_PUB_VERSION;
	h->hdr_size = sizeof *h;
	h->size = p->size;
	h->uid = (uint32_t)geteuid();
	h->pid = (int32_t)pid;
	h->proc_start = ps.start;
	h->started_unix_ns = (uint64_t)wall.tv_sec * RLT_NS_PER_SEC + (uint64_t)wall.tv_nsec;
	h->started_ns = now;
	h->nrules = n;
	h->rec_size = sizeof(struct rlt__pub_rec);
	atomic_init(&h->hist_sec, now / RLT_NS_PER_SEC);
	atomic_init(&p->next_ns, next_tick(now));
	unsigned k = 0;
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		p->first[v] = k;
		for (unsigned i = 0; i < rs->n[v]; i++, k++) {
			struct rlt__rt_rule *r = &rs->rules[v][i];
			struct rlt__pub_rec *rec = rlt__pub_rec_at(h, k);
			rec->var = (uint32_t)v;
			rec->index = i;
			params_of(&r->rule, &rec->params);
			stats_copy(&rec->st, r->st);
			if (v == RLT_VAR_CONNS && !r->keytab)
				atomic_init(&rec->open, rlt__conns_open(r));
			if (r->keytab)
				r->keytab->count_units = 1; /* the page shows the busiest keys */
			uint64_t u = LOAD(rec->st.units);
			for (unsigned s = 0; s < RLT_PUB_HIST; s++)
				atomic_init(&rec->hist[s], u);
		}
	}
	/* the counters move to the page: from here on the hot path counts there */
	k = 0;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++, k++)
			rs->rules[v][i].st = &rlt__pub_rec_at(h, k)->st;
	/* RLT_NET's counts move to the page too, and its conditions are shown */
	rlt__net_counts_copy(&h->net, rlt__net_counts);
	rlt__net_counts = &h->net;
	rs->pub = p;
	rlt__pub_net_update(rs);
	/* a reader that sees the magic sees the rest */
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)&h->magic = RLT_PUB_MAGIC;
	rs->stats_on = 1;
	return 0;
}

void rlt__pub_net_update(struct rlt__ruleset *rs)
{
	struct rlt__pub_hdr *h = rs->pub ? rs->pub->hdr : NULL;
	uint32_t gen, s;
	const struct rlt__net_set *set = rlt__net_now(&gen);
	size_t o = 0;

	if (!h)
		return;
	s = atomic_load_explicit(&h->net_seq, memory_order_relaxed);
	atomic_store_explicit(&h->net_seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	for (unsigned i = 0; i < set->n; i++) {
		size_t l = strlen(set->c[i].text);
		if (o + l + 2 > sizeof h->net_text)
			break;
		if (i) {
			memcpy(h->net_text + o, "; ", 2);
			o += 2;
		}
		memcpy(h->net_text + o, set->c[i].text, l);
		o += l;
	}
	h->net_len = (uint32_t)o;
	atomic_store_explicit(&h->net_seq, s + 2, memory_order_release);
}

void rlt__pub_unlink(struct rlt__pub *p)
{
	if (p && p->path[0])
		unlink(p->path);
}

int rlt__pub_relink(struct rlt__pub *p)
{
	if (!p || !p->path[0])
		return -EINVAL;
	int fd = make_file(p->path, p->size);
	if (fd < 0)
		return fd;
	/* the page as it stands into the new file, then the file mapped over the page at the
	 * same address: every pointer into the page stays valid */
	int rc = 0;
	for (size_t done = 0; done < p->size && rc == 0;) {
		ssize_t n = pwrite(fd, (char *)p->hdr + done, p->size - done, (off_t)done);
		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n == 0)
			rc = -EIO;
	}
	if (rc == 0 && mmap(p->hdr, p->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
	                    0) == MAP_FAILED)
		rc = -errno;
	if (rc)
		unlink(p->path);
	rlt__pub_raw_close(fd);
	return rc;
}

/* The rules count privately again, carrying over what the page holds. */
static void back_to_own(struct rlt__ruleset *rs)
{
	if (rs->pub && rlt__net_counts == &rs->pub->hdr->net) {
		rlt__net_counts_copy(&rlt__net_own, rlt__net_counts);
		rlt__net_counts = &rlt__net_own;
	}
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			struct rlt__rt_rule *r = &rs->rules[v][i];
			if (r->st != &r->own)
				stats_copy(&r->own, r->st);
			r->st = &r->own;
		}
}

void rlt__pub_destroy(struct rlt__ruleset *rs)
{
	struct rlt__pub *p = rs->pub;

	if (!p)
		return;
	back_to_own(rs);
	rs->pub = NULL;
	rlt__pub_unlink(p);
	munmap(p->hdr, p->size);
	free(p);
}

void rlt__pub_forked(struct rlt__ruleset *rs, pid_t pid)
{
	struct rlt__pub *parent = rs->pub;
	struct rlt_error err;

	if (!parent)
		return;
	/* the child's counts start at zero (rlthrottle(7) STATISTICS: a fork reports its own calls) */
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			rlt__stats_zero(&rs->rules[v][i].own);
			rs->rules[v][i].st = &rs->rules[v][i].own;
		}
	if (rlt__net_counts == &parent->hdr->net)
		rlt__net_counts = &rlt__net_own; /* the child's count from 0: its fork handler's */
	rs->pub = NULL;
	/* the parent's mapping is shared with the parent: leave it, never its name */
	munmap(parent->hdr, parent->size);
	free(parent);
	rlt__pub_create(rs, pid, &err);
}

void rlt__pub_rule_update(struct rlt__ruleset *rs, enum rlt_var var, unsigned i)
{
	struct rlt__pub *p = rs->pub;

	if (!p || (unsigned)var >= RLT_VAR_COUNT || i >= rs->n[var])
		return;
	struct rlt__pub_rec *rec = rlt__pub_rec_at(p->hdr, p->first[var] + i);
	uint32_t s = atomic_load_explicit(&rec->seq, memory_order_relaxed);
	atomic_store_explicit(&rec->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	params_of(&rs->rules[var][i].rule, &rec->params);
	atomic_store_explicit(&rec->seq, s + 2, memory_order_release);
}

void rlt__pub_conns(struct rlt__ruleset *rs)
{
	for (unsigned i = 0; i < rs->n[RLT_VAR_CONNS]; i++) {
		struct rlt__rt_rule *r = &rs->rules[RLT_VAR_CONNS][i];
		if (!r->keytab)
			rlt__pub_open_now(r, rlt__conns_open(r));
	}
}

void *rlt__pub_ctl(struct rlt__pub *p)
{
	return p ? p->hdr->ctl : NULL;
}

/* Rule r's busiest keys into its record, under the record's keys seqlock. */
static void keys_write(struct rlt__pub_rec *rec, const struct rlt__rt_rule *r)
{
	struct rlt__keytab_top top[RLT_PUB_BUSIEST];
	struct rlt__pub_key out[RLT_PUB_BUSIEST];
	size_t n = rlt__keytab_top(r->keytab, top, RLT_PUB_BUSIEST);

	memset(out, 0, sizeof out);
	for (size_t j = 0; j < n; j++) {
		memcpy(out[j].w, top[j].key.w, sizeof out[j].w);
		out[j].units = top[j].units;
		if (r->keydry) {
			const struct rlt__keydry *d = &r->keydry[top[j].slot];
			if (LOAD(d->seq) == top[j].seq) {
				out[j].would_delay_ns = LOAD(d->wait_ns);
				out[j].would_reject = LOAD(d->refused);
			}
		}
	}
	uint32_t s = LOAD(rec->keys_seq);
	atomic_store_explicit(&rec->keys_seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy((void *)rec->busy, out, sizeof out);
	rec->nbusy = (uint32_t)n;
	atomic_store_explicit(&rec->keys_seq, s + 2, memory_order_release);
}

void rlt__pub_keys(struct rlt__ruleset *rs, rlt_ns_t now)
{
	uint64_t next = atomic_load_explicit(&rs->keys_next, memory_order_relaxed);
	uint64_t every = RLT_PUB_CHECK_NS;
	struct rlt__pub *p = rs->pub;

	if (!p || now < next)
		return;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			const struct rlt__keytab *t = rs->rules[v][i].keytab;
			if (t && t->keys > RLT_PUB_SCAN_PER_SEC &&
			    (uint64_t)t->keys * RLT_NS_PER_SEC / RLT_PUB_SCAN_PER_SEC > every)
				every = (uint64_t)t->keys * RLT_NS_PER_SEC / RLT_PUB_SCAN_PER_SEC;
		}
	/* one thread scans; a call racing it goes on */
	if (!atomic_compare_exchange_strong_explicit(&rs->keys_next, &next, now + every,
	                                             memory_order_relaxed, memory_order_relaxed))
		return;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++)
			if (rs->rules[v][i].keytab)
				keys_write(rlt__pub_rec_at(p->hdr, p->first[v] + i), &rs->rules[v][i]);
}

int rlt__pub_roll(struct rlt__pub *p, rlt_ns_t now)
{
	uint64_t next = atomic_load_explicit(&p->next_ns, memory_order_relaxed);
	uint64_t sec = now / RLT_NS_PER_SEC;
	struct rlt__pub_hdr *h = p->hdr;

	if (now < next ||
	    !atomic_compare_exchange_strong_explicit(&p->next_ns, &next, next_tick(now),
	                                             memory_order_relaxed, memory_order_relaxed))
		return 0; /* another thread ticks */
	uint64_t from = LOAD(h->hist_sec) + 1;
	if (sec >= RLT_PUB_HIST && from < sec - (RLT_PUB_HIST - 1))
		from = sec - (RLT_PUB_HIST - 1);
	if (from > sec)
		return 1; /* the same second: the history has its mark */
	/* the seconds nobody called in get the same mark: nothing moved in them */
	for (unsigned k = 0; k < h->nrules; k++) {
		struct rlt__pub_rec *rec = rlt__pub_rec_at(h, k);
		uint64_t u = LOAD(rec->st.units);
		for (uint64_t s = from; s <= sec; s++)
			STORE(rec->hist[s % RLT_PUB_HIST], u);
	}
	atomic_store_explicit(&h->hist_sec, sec, memory_order_release);
	return 1;
}

