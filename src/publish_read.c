/*
 * publish_read.c: the read side of the per-process pages (rlthrottle(1) COMMANDS) for `rlthrottle top`,
 * `stats` and `set`: finding a process's page, opening it with its checks, reading a rule.
 * It trusts nothing in the page (see publish.c's opening comment for the rules it holds to).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "keytab.h"
#include "keytab_key.h"
#include "proc_stat.h"
#include "publish.h"
#include "publish_page.h"
#include "publish_read.h"

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

/* After an upgrade, a process started before it publishes the old layout (or, after a
 * downgrade, a newer one): one line that says so, and -EPROTO for the callers to tell it from
 * a page that is wrong. */
static int other_layout(struct rlt_error *err, pid_t pid, uint32_t version)
{
	return rlt__fail(err, -EPROTO,
	                 "%d: publishes page layout %u, this rlthrottle reads layout %u (it was "
	                 "started by %s rlthrottle): restart it to watch or steer it",
	                 (int)pid, (unsigned)version, RLT_PUB_VERSION,
	                 version < RLT_PUB_VERSION ? "an older" : "a newer");
}

/* The page at path opened (rw: to write its control area) if it may be believed: a plain file
 * of ours (or we are root), mode 0600, of a page's size (one of another layout says so). 0 with
 * *fd and *size, or a negative errno with err (nothing left open). */
static int open_trusted(pid_t pid, const char *path, int rw, int *fd, size_t *size,
                        struct rlt_error *err)
{
	struct stat st;

	*fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return rlt__fail(err, errno == EACCES ? -EACCES : -errno, "%d: cannot open %s: %s",
		            (int)pid, path, strerror(errno));
	if (fstat(*fd, &st) != 0) {
		int rc = -errno;
		close(*fd);
		return rlt__fail(err, rc, "%d: cannot stat %s", (int)pid, path);
	}
	/* trust: a page another user made, or that others may write, is not believed */
	if (!S_ISREG(st.st_mode)) {
		close(*fd);
		return rlt__fail(err, -EACCES, "%d: %s is not a page (a FIFO or device planted under "
		                 "its name?): refused", (int)pid, path);
	}
	if (st.st_uid != geteuid() && geteuid() != 0) {
		close(*fd);
		return rlt__fail(err, -EACCES, "%d: %s belongs to uid %u, not to us: refused", (int)pid,
		            path, (unsigned)st.st_uid);
	}
	if ((st.st_mode & 07777) != 0600) {
		close(*fd);
		return rlt__fail(err, -EACCES, "%d: %s has mode %04o, not 0600: refused", (int)pid, path,
		            (unsigned)(st.st_mode & 07777));
	}
	if (st.st_size < (off_t)sizeof(struct rlt__pub_hdr) || (size_t)st.st_size > PAGE_MAX) {
		/* a page of another layout (an older or newer rlthrottle) says so in its first
		 * words: that is worth one clear line */
		struct { uint64_t magic; uint32_t version; } head = {0, 0};
		int whole = pread(*fd, &head, sizeof head, 0) == (ssize_t)sizeof head;
		close(*fd);
		if (whole && head.magic == RLT_PUB_MAGIC && head.version != RLT_PUB_VERSION)
			return other_layout(err, pid, head.version);
		return rlt__fail(err, -EINVAL, "%d: %s is %lld bytes: not a page of this version",
		            (int)pid, path, (long long)st.st_size);
	}
	*size = (size_t)st.st_size;
	return 0;
}

/* The header of the page rd maps, copied into rd->hdr and checked: this layout, this build's
 * sizes, its file's size, room for its rules, process pid started at `start`. 0, or a
 * negative errno with err (the caller closes rd). */
static int header_check(struct rlt__pub_reader *rd, pid_t pid, uint64_t start, const char *path,
                        struct rlt_error *err)
{
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
	else if (c->pid != (int32_t)pid || c->proc_start != start)
		why = "it describes another process";
	if (magic == RLT_PUB_MAGIC && c->version != RLT_PUB_VERSION)
		return other_layout(err, pid, c->version);
	if (why)
		return rlt__fail(err, -EINVAL, "%d: %s: %s: refused", (int)pid, path, why);
	return 0;
}

int rlt__pub_open(pid_t pid, int rw, struct rlt__pub_reader *rd, struct rlt_error *err)
{
	struct rlt__proc_stat ps;
	char path[300];
	long other;
	int fd, rc;

	memset(rd, 0, sizeof *rd);
	rd->fd = -1;
	if (pid <= 0 || rlt__proc_stat(pid, &ps) != 0 || ps.state == 'Z')
		return rlt__fail(err, -ENOENT, "%d: no such process", (int)pid);
	/* our own name first (no directory scan: `top` opens every page every second); the
	 * scan finds another user's page (root reads it; others are told whose it is) */
	rlt__pub_path(path, sizeof path, geteuid(), pid, ps.start);
	if (access(path, F_OK) != 0 && find_page(pid, ps.start, path, sizeof path, &other) != 0) {
		if (other >= 0)
			return rlt__fail(err, -EACCES,
			            "%d: a throttled process of another user (uid %ld): refused",
			            (int)pid, other);
		return rlt__fail(err, -ENOENT, "%d: not a process throttled by rlthrottle (no page in %s)",
		            (int)pid, RLT_PUB_DIR);
	}
	rc = open_trusted(pid, path, rw, &fd, &rd->size, err);
	if (rc)
		return rc;
	rd->map = mmap(NULL, rd->size, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (rd->map == MAP_FAILED) {
		rc = -errno;
		close(fd);
		rd->map = NULL;
		return rlt__fail(err, rc, "%d: cannot map %s", (int)pid, path);
	}
	rd->fd = fd;
	rd->writable = rw;
	rc = header_check(rd, pid, ps.start, path, err);
	if (rc) {
		rlt__pub_close(rd);
		return rc;
	}
	rd->nrules = rd->hdr.nrules;
	return 0;
}

void rlt__pub_read_net(const struct rlt__pub_reader *rd, struct rlt__net_stats *n, char *text,
                       size_t len)
{
	const struct rlt__pub_hdr *h = rd->map;

	rlt__net_counts_copy(n, &h->net);
	/* a few tries: a set rewrites it rarely, and a reader never waits on a writer */
	for (int tries = 0; tries < 8; tries++) {
		uint32_t s = atomic_load_explicit(&h->net_seq, memory_order_acquire);
		if (s & 1)
			continue;
		uint32_t l = *(const volatile uint32_t *)&h->net_len;
		if (l >= sizeof h->net_text || l >= len)
			l = 0;
		memcpy(text, h->net_text, l);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&h->net_seq, memory_order_relaxed) == s) {
			text[l] = '\0';
			return;
		}
	}
	text[0] = '\0';
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

/* A keyed rule's busiest keys (its record's keys seqlock, bounded as the params' is). */
static void read_busy(const struct rlt__pub_rec *rec, struct rlt__pub_rule *out)
{
	struct rlt__pub_key busy[RLT_PUB_BUSIEST];
	uint32_t n = 0;
	int ok = 0;

	for (int tries = 0; tries < 10000 && !ok; tries++) {
		uint32_t s1 = atomic_load_explicit(&rec->keys_seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		memcpy(busy, (const void *)rec->busy, sizeof busy);
		n = *(const volatile uint32_t *)&rec->nbusy;
		atomic_thread_fence(memory_order_acquire);
		ok = atomic_load_explicit(&rec->keys_seq, memory_order_relaxed) == s1;
	}
	if (!ok)
		return;
	if (n > RLT_PUB_BUSIEST)
		n = RLT_PUB_BUSIEST;
	for (uint32_t j = 0; j < n; j++) {
		struct rlt__key k;
		memcpy(k.w, busy[j].w, sizeof k.w);
		rlt__key_format(&k, out->params.key_prefix4, out->params.key_prefix6,
		                out->busy[j].key, sizeof out->busy[j].key);
		out->busy[j].units = busy[j].units;
		out->busy[j].would_delay_ns = busy[j].would_delay_ns;
		out->busy[j].would_reject = busy[j].would_reject;
	}
	out->nbusy = n;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* a hostile or racing page never makes a negative count */
}

void rlt__pub_read(const struct rlt__pub_reader *rd, unsigned k, rlt_ns_t now,
                   struct rlt__pub_rule *out)
{
	struct rlt__pub_hdr *h = rd->map;
	struct rlt__pub_rec *rec = rlt__pub_rec_at(h, k);

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
	    p->action > RLT_ACTION_DRY_RUN || p->unit > RLT_UNIT_CONNS || p->key > RLT_KEY_PORT ||
	    p->key_prefix4 > 32 || p->key_prefix6 > 128) {
		memset(p, 0, sizeof *p);
		out->params_torn = 1;
	}
	if (p->keys && !out->params_torn)
		read_busy(rec, out);
	out->calls = LOAD(rec->st.calls);
	out->allowed = LOAD(rec->st.allowed);
	out->delayed = LOAD(rec->st.delayed);
	out->rejected = LOAD(rec->st.rejected);
	out->units = LOAD(rec->st.units);
	out->delay_ns_total = LOAD(rec->st.delay_ns_total);
	out->delay_ns_max = LOAD(rec->st.delay_ns_max);
	out->waiting = LOAD(rec->st.waiting);
	out->keys_tracked = LOAD(rec->st.keys_tracked);
	out->keys_evicted = LOAD(rec->st.keys_evicted);
	out->would_delay = LOAD(rec->st.would_delay);
	out->would_delay_ns_total = LOAD(rec->st.would_delay_ns_total);
	out->would_delay_ns_max = LOAD(rec->st.would_delay_ns_max);
	out->would_reject = LOAD(rec->st.would_reject);
	out->open = out->var == RLT_VAR_CONNS ? LOAD(rec->open) : 0;
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
