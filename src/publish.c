/*
 * publish.c: the per-process page of SPEC §7 (see publish.h for the layout and its rules).
 *
 * Writer: made once per process (load, a fork's child, or by the supervisor for each process it
 * serves), never resized. The hot path only counts into it (charge.c, conns.c, unchanged) and,
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
#include "proc_stat.h"
#include "publish.h"

/* The largest page a reader accepts: a header and every rule a process can have. */
#define PAGE_MAX (sizeof(struct rlt__pub_hdr) + RLT_PUB_MAX_RULES * sizeof(struct rlt__pub_rec))

static void raw_close(int fd)
{
	syscall(SYS_close, fd);
}

int rlt__pub_path(char *buf, size_t len, uid_t uid, pid_t pid, uint64_t start)
{
	int n = snprintf(buf, len, RLT_PUB_DIR RLT_PUB_PREFIX "%u-%d-%llu", (unsigned)uid, (int)pid,
	                 (unsigned long long)start);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

static struct rlt__pub_rec *rec_at(struct rlt__pub_hdr *h, unsigned k)
{
	return (struct rlt__pub_rec *)((char *)h + sizeof *h + (size_t)k * sizeof(struct rlt__pub_rec));
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
	memcpy(p->text, r->text, sizeof p->text - 1);
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

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
		/* the umask may have taken bits off; readers insist on exactly 0600 */
		if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)size) != 0) {
			int rc = -errno;
			unlink(path);
			raw_close(fd);
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

int rlt__pub_create(struct rlt__ruleset *rs, pid_t pid, int supervised, struct rlt_error *err)
{
	struct rlt__proc_stat ps;
	struct rlt__pub *p;
	unsigned n = 0;
	int fd, rc;

	for (int v = 0; v < RLT_VAR_COUNT; v++)
		n += rs->n[v];
	if (n == 0)
		return 0; /* nothing to show */
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
	raw_close(fd);
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
	h->supervised = supervised ? 1 : 0;
	atomic_init(&h->hist_sec, now / RLT_NS_PER_SEC);
	atomic_init(&p->next_ns, next_tick(now));
	unsigned k = 0;
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		p->first[v] = k;
		for (unsigned i = 0; i < rs->n[v]; i++, k++) {
			struct rlt__rt_rule *r = &rs->rules[v][i];
			struct rlt__pub_rec *rec = rec_at(h, k);
			rec->var = (uint32_t)v;
			rec->index = i;
			params_of(&r->rule, &rec->params);
			stats_copy(&rec->st, r->st);
			uint64_t u = LOAD(rec->st.units);
			for (unsigned s = 0; s < RLT_PUB_HIST; s++)
				atomic_init(&rec->hist[s], u);
		}
	}
	/* the counters move to the page: from here on the hot path counts there */
	k = 0;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++, k++)
			rs->rules[v][i].st = &rec_at(h, k)->st;
	/* a reader that sees the magic sees the rest */
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)&h->magic = RLT_PUB_MAGIC;
	rs->pub = p;
	rs->stats_on = 1;
	return 0;
}

void rlt__pub_unlink(struct rlt__pub *p)
{
	if (p && p->path[0])
		unlink(p->path);
}

/* The rules count privately again, carrying over what the page holds. */
static void back_to_own(struct rlt__ruleset *rs)
{
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
	/* the child's counts start at zero (SPEC §6: a fork reports its own calls) */
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++)
			memset(&rs->rules[v][i].own, 0, sizeof rs->rules[v][i].own);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++)
			rs->rules[v][i].st = &rs->rules[v][i].own;
	rs->pub = NULL;
	/* the parent's mapping is shared with the parent: leave it, never its name */
	munmap(parent->hdr, parent->size);
	free(parent);
	rlt__pub_create(rs, pid, 0, &err);
}

void rlt__pub_rule_update(struct rlt__ruleset *rs, enum rlt_var var, unsigned i)
{
	struct rlt__pub *p = rs->pub;

	if (!p || (unsigned)var >= RLT_VAR_COUNT || i >= rs->n[var])
		return;
	struct rlt__pub_rec *rec = rec_at(p->hdr, p->first[var] + i);
	uint32_t s = atomic_load_explicit(&rec->seq, memory_order_relaxed);
	atomic_store_explicit(&rec->seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	params_of(&rs->rules[var][i].rule, &rec->params);
	atomic_store_explicit(&rec->seq, s + 2, memory_order_release);
}

void *rlt__pub_ctl(struct rlt__pub *p)
{
	return p ? p->hdr->ctl : NULL;
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
		struct rlt__pub_rec *rec = rec_at(h, k);
		uint64_t u = LOAD(rec->st.units);
		for (uint64_t s = from; s <= sec; s++)
			STORE(rec->hist[s % RLT_PUB_HIST], u);
	}
	atomic_store_explicit(&h->hist_sec, sec, memory_order_release);
	return 1;
}

/* ----- the read side ----- */

static int fail(struct rlt_error *err, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct rlt_error *err, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return rc;
}

/* "UID-PID-START" after the prefix, digits only, each in range. */
static int parse_name(const char *s, uid_t *uid, pid_t *pid, uint64_t *start)
{
	unsigned long long f[3];

	for (int i = 0; i < 3; i++) {
		char *end;
		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		f[i] = strtoull(s, &end, 10);
		if (errno || end - s > 20 || *end != (i < 2 ? '-' : '\0'))
			return -1;
		s = end + (i < 2);
	}
	if (f[0] > UINT32_MAX || f[1] == 0 || f[1] > 0x7fffffff)
		return -1;
	*uid = (uid_t)f[0];
	*pid = (pid_t)f[1];
	*start = f[2];
	return 0;
}

/* Whether pid is alive and started at `start`. */
static int alive(pid_t pid, uint64_t start)
{
	struct rlt__proc_stat ps;
	return rlt__proc_stat(pid, &ps) == 0 && ps.start == start && ps.state != 'Z' &&
	       ps.state != 'X';
}

/* A page whose process is gone: removed if it is ours and still a plain file. */
static void remove_stale(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		unlink(path);
}

int rlt__pub_list(pid_t *pids, uint64_t *starts, size_t max)
{
	size_t plen = strlen(RLT_PUB_PREFIX), n = 0;
	uid_t me = geteuid();
	DIR *d = opendir(RLT_PUB_DIR);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[300];
		uid_t uid;
		pid_t pid;
		uint64_t start;
		if (strncmp(de->d_name, RLT_PUB_PREFIX, plen) != 0 ||
		    parse_name(de->d_name + plen, &uid, &pid, &start) != 0)
			continue;
		if (uid != me && me != 0)
			continue;
		snprintf(path, sizeof path, RLT_PUB_DIR "%s", de->d_name);
		if (!alive(pid, start)) {
			remove_stale(path);
			continue;
		}
		/* one pid may have two names (ours and, for root, another user's; or an exec's
		 * replacement in its instant): listed once */
		size_t j = 0, kept = n < max ? n : max;
		while (j < kept && pids[j] != pid)
			j++;
		if (j < kept)
			continue;
		if (n < max) {
			/* ascending: insertion (a few hundred at most) */
			size_t at = n;
			while (at > 0 && pids[at - 1] > pid) {
				pids[at] = pids[at - 1];
				if (starts)
					starts[at] = starts[at - 1];
				at--;
			}
			pids[at] = pid;
			if (starts)
				starts[at] = start;
		}
		n++;
	}
	closedir(d);
	return (int)n;
}

/* The name of pid's live page; stale names of the same pid are removed on the way. 0, or
 * -ENOENT; *other_uid set when only another user's page was seen. */
static int find_page(pid_t pid, uint64_t start, char *out, size_t len, long *other_uid)
{
	size_t plen = strlen(RLT_PUB_PREFIX);
	uid_t me = geteuid();
	DIR *d = opendir(RLT_PUB_DIR);
	struct dirent *de;
	int rc = -ENOENT;

	*other_uid = -1;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uid_t uid;
		pid_t p;
		uint64_t s;
		char path[300];
		if (strncmp(de->d_name, RLT_PUB_PREFIX, plen) != 0 ||
		    parse_name(de->d_name + plen, &uid, &p, &s) != 0 || p != pid)
			continue;
		snprintf(path, sizeof path, RLT_PUB_DIR "%s", de->d_name);
		if (s != start) {
			remove_stale(path);
			continue;
		}
		if (uid != me && me != 0) {
			*other_uid = (long)uid;
			continue;
		}
		if (rc == 0 && uid != me)
			continue; /* root: its own first */
		snprintf(out, len, "%s", path);
		rc = 0;
	}
	closedir(d);
	return rc;
}

int rlt__pub_open(pid_t pid, int rw, struct rlt__pub_reader *rd, struct rlt_error *err)
{
	struct rlt__proc_stat ps;
	char path[300];
	struct stat st;
	long other;
	int fd;

	memset(rd, 0, sizeof *rd);
	rd->fd = -1;
	if (pid <= 0 || rlt__proc_stat(pid, &ps) != 0 || ps.state == 'Z')
		return fail(err, -ENOENT, "%d: no such process", (int)pid);
	/* our own name first (no directory scan: `top` opens every page every second); the
	 * scan finds another user's page (root reads it; others are told whose it is) */
	rlt__pub_path(path, sizeof path, geteuid(), pid, ps.start);
	if (access(path, F_OK) != 0 && find_page(pid, ps.start, path, sizeof path, &other) != 0) {
		if (other >= 0)
			return fail(err, -EACCES,
			            "%d: a throttled process of another user (uid %ld): refused",
			            (int)pid, other);
		return fail(err, -ENOENT, "%d: not a process throttled by rlthrottle (no page in %s)",
		            (int)pid, RLT_PUB_DIR);
	}
	fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errno == EACCES ? -EACCES : -errno, "%d: cannot open %s: %s",
		            (int)pid, path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		int rc = -errno;
		close(fd);
		return fail(err, rc, "%d: cannot stat %s", (int)pid, path);
	}
	/* trust: a page another user made, or that others may write, is not believed */
	if (!S_ISREG(st.st_mode) || (st.st_uid != geteuid() && geteuid() != 0)) {
		close(fd);
		return fail(err, -EACCES, "%d: %s belongs to uid %u, not to us: refused", (int)pid,
		            path, (unsigned)st.st_uid);
	}
	if ((st.st_mode & 07777) != 0600) {
		close(fd);
		return fail(err, -EACCES, "%d: %s has mode %04o, not 0600: refused", (int)pid, path,
		            (unsigned)(st.st_mode & 07777));
	}
	if (st.st_size < (off_t)sizeof(struct rlt__pub_hdr) || (size_t)st.st_size > PAGE_MAX) {
		close(fd);
		return fail(err, -EINVAL, "%d: %s is %lld bytes: not a page of this version",
		            (int)pid, path, (long long)st.st_size);
	}
	rd->size = (size_t)st.st_size;
	rd->map = mmap(NULL, rd->size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (rd->map == MAP_FAILED) {
		int rc = -errno;
		close(fd);
		rd->map = NULL;
		return fail(err, rc, "%d: cannot map %s", (int)pid, path);
	}
	rd->fd = fd;
	rd->writable = rw;
	const struct rlt__pub_hdr *h = rd->map;
	uint64_t magic = *(const volatile uint64_t *)&h->magic;
	atomic_thread_fence(memory_order_acquire);
	memcpy(&rd->hdr, h, offsetof(struct rlt__pub_hdr, hist_sec));
	const struct rlt__pub_hdr *c = &rd->hdr;
	const char *why = NULL;
	if (magic != RLT_PUB_MAGIC)
		why = "no magic (being made, or not a page)";
	else if (c->version != RLT_PUB_VERSION)
		why = "another version of the layout";
	else if (c->hdr_size != sizeof(struct rlt__pub_hdr) ||
	         c->rec_size != sizeof(struct rlt__pub_rec))
		why = "header or record size of another build";
	else if (c->size != rd->size)
		why = "its size differs from the file's";
	else if (c->nrules > RLT_PUB_MAX_RULES ||
	         sizeof *h + (size_t)c->nrules * sizeof(struct rlt__pub_rec) > rd->size)
		why = "more rules than it has room for";
	else if (c->pid != (int32_t)pid || c->proc_start != ps.start)
		why = "it describes another process";
	if (why) {
		rlt__pub_close(rd);
		return fail(err, -EINVAL, "%d: %s: %s: refused", (int)pid, path, why);
	}
	rd->nrules = c->nrules;
	return 0;
}

void rlt__pub_close(struct rlt__pub_reader *rd)
{
	if (rd->map)
		munmap(rd->map, rd->size);
	if (rd->fd >= 0)
		close(rd->fd);
	rd->map = NULL;
	rd->fd = -1;
}

void *rlt__pub_reader_ctl(struct rlt__pub_reader *rd)
{
	return rd->map && rd->writable ? ((struct rlt__pub_hdr *)rd->map)->ctl : NULL;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* a hostile or racing page never makes a negative count */
}

void rlt__pub_read(const struct rlt__pub_reader *rd, unsigned k, rlt_ns_t now,
                   struct rlt__pub_rule *out)
{
	struct rlt__pub_hdr *h = rd->map;
	struct rlt__pub_rec *rec = rec_at(h, k);

	memset(out, 0, sizeof *out);
	if (k >= rd->nrules)
		return;
	out->var = (enum rlt_var)(rec->var < RLT_VAR_COUNT ? rec->var : RLT_VAR_COUNT);
	out->index = rec->index < RLT_MAX_RULES_PER_VAR ? rec->index : 0;
	out->params_torn = 1;
	/* seqlock, bounded: a writer holds it for a memcpy; one that never lets go (died
	 * within it, or hostile) gives "unknown" */
	for (int tries = 0; tries < 10000; tries++) {
		uint32_t s1 = atomic_load_explicit(&rec->seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		memcpy(&out->params, (const void *)&rec->params, sizeof out->params);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&rec->seq, memory_order_relaxed) == s1) {
			out->params_torn = 0;
			break;
		}
	}
	struct rlt__pub_params *p = &out->params;
	p->text[sizeof p->text - 1] = '\0';
	if (out->params_torn || p->algo >= RLT_ALGO_COUNT || p->scope > RLT_SCOPE_REDIS ||
	    p->action > RLT_ACTION_REJECT || p->unit > RLT_UNIT_CONNS) {
		memset(p, 0, sizeof *p);
		out->params_torn = 1;
	}
	out->calls = LOAD(rec->st.calls);
	out->allowed = LOAD(rec->st.allowed);
	out->delayed = LOAD(rec->st.delayed);
	out->rejected = LOAD(rec->st.rejected);
	out->units = LOAD(rec->st.units);
	out->delay_ns_total = LOAD(rec->st.delay_ns_total);
	out->delay_ns_max = LOAD(rec->st.delay_ns_max);
	out->waiting = LOAD(rec->st.waiting);
	/* a waiting count below zero (a racing decrement) reads as a huge number: none */
	if (out->waiting > (1u << 24))
		out->waiting = 0;

	/* history: the whole seconds N-60 .. N-1 of the reader's clock */
	int64_t last = (int64_t)atomic_load_explicit(&h->hist_sec, memory_order_acquire);
	int64_t nsec = (int64_t)(now / RLT_NS_PER_SEC);
	for (unsigned j = 0; j < RLT_PUB_HIST; j++) {
		int64_t s = nsec - (int64_t)RLT_PUB_HIST + (int64_t)j;
		uint64_t v = 0;
		if (s < 0 || s > last || s < last - (int64_t)(RLT_PUB_HIST - 1))
			v = 0;
		else if (s == last)
			v = minus(out->units, LOAD(rec->hist[(uint64_t)s % RLT_PUB_HIST]));
		else
			v = minus(LOAD(rec->hist[(uint64_t)(s + 1) % RLT_PUB_HIST]),
			          LOAD(rec->hist[(uint64_t)s % RLT_PUB_HIST]));
		out->per_sec[j] = v;
	}
}
