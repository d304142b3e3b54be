/*
 * scope_command.c: one budget for the whole command (see scope_command.h). The budgets
 * themselves are shared segments (scope_shm.c) under names derived from the command's; here
 * are the names, the command's own segment (its statistics) and the clean-up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scope_command.h"
#include "scope_shm.h"
#include "stats_count.h"

static const char *const var_word[RLT_VAR_COUNT] = {
	[RLT_VAR_CONNECT] = "connect", [RLT_VAR_ACCEPT] = "accept", [RLT_VAR_SEND] = "send",
	[RLT_VAR_RECV] = "recv",       [RLT_VAR_CONNS] = "conns",
};

int rlt__cmd_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > RLT_CMD_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* FNV-1a: tells two texts of a rule apart in a name; not a defence (the names are ours). */
static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

int rlt__cmd_rule(const char *name, struct rlt_rule *r, unsigned index)
{
	char canon[1024];

	if (r->scope_given || r->scope != RLT_SCOPE_PROCESS || (unsigned)r->var >= RLT_VAR_COUNT)
		return 0;
	/* policy.c refuses a keyed RLT_CONNS rule in a segment: it keeps a count per process */
	if (r->var == RLT_VAR_CONNS && r->key != RLT_KEY_NONE)
		return 0;
	rlt_rule_format(r, canon, sizeof canon);
	snprintf(r->scope_name, sizeof r->scope_name, "%s.%s.%u.%08x", name, var_word[r->var],
	         index, hash(canon));
	r->scope = RLT_SCOPE_SHARED;
	return 1;
}

static void seg_name(char *out, size_t len, const char *name)
{
	snprintf(out, len, "/" RLT_SHM_PREFIX "%s", name);
}

/* Opens the command's segment and checks it is one: ours, a regular file others cannot
 * write, the size of ours. The fd, or -1. */
static int open_seg(const char *name, int flags)
{
	char obj[RLT_CMD_NAME_MAX + 32];
	struct stat st;
	int fd;

	if (!rlt__cmd_name_ok(name))
		return -1;
	seg_name(obj, sizeof obj, name);
	fd = shm_open(obj, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size != (off_t)sizeof(struct rlt__cmd_seg)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct rlt__cmd_seg *map_seg(const char *name)
{
	int fd = open_seg(name, O_RDWR);
	struct rlt__cmd_seg *s;

	if (fd < 0)
		return NULL;
	s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED)
		return NULL;
	if (s->magic != RLT_CMD_MAGIC || s->layout != RLT_CMD_LAYOUT || s->size != sizeof *s) {
		munmap(s, sizeof *s);
		return NULL;
	}
	return s;
}

int rlt__cmd_alive(const char *name)
{
	struct rlt__cmd_seg *s = map_seg(name);

	if (!s)
		return 0;
	munmap(s, sizeof *s);
	return 1;
}

struct rlt__cmd_seg *rlt__cmd_create(const char *name, const struct rlt__ruleset *rs,
                                     pid_t launcher, uint64_t start, struct rlt_error *err)
{
	char obj[RLT_CMD_NAME_MAX + 32];
	struct rlt__cmd_seg *s;
	int fd, rc;

	if (!rlt__cmd_name_ok(name)) {
		snprintf(err->msg, sizeof err->msg, "%s: \"%.100s\" is not a command's name",
		         RLT_CMD_ENV, name);
		return NULL;
	}
	seg_name(obj, sizeof obj, name);
	fd = shm_open(obj, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err->msg, sizeof err->msg, "cannot create the command's segment %s: %s",
		         obj, strerror(errno));
		return NULL;
	}
	/* allocated now: a full /dev/shm fails here, not with SIGBUS in a process at its end */
	rc = ftruncate(fd, (off_t)sizeof *s) != 0 ? errno : posix_fallocate(fd, 0, sizeof *s);
	s = rc ? MAP_FAILED : mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED) {
		snprintf(err->msg, sizeof err->msg, "cannot size the command's segment %s: %s", obj,
		         strerror(rc ? rc : errno));
		close(fd);
		shm_unlink(obj);
		return NULL;
	}
	close(fd);
	s->magic = RLT_CMD_MAGIC;
	s->layout = RLT_CMD_LAYOUT;
	s->launcher = (int32_t)launcher;
	s->launcher_start = start;
	s->size = sizeof *s;
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v] && i < RLT_MAX_RULES_PER_VAR; i++) {
			s->slot[v][i].used = 1;
			snprintf(s->slot[v][i].text, sizeof s->slot[v][i].text, "%s",
			         rs->rules[v][i].rule.text);
		}
	return s;
}

/* The command's slot of rule i of variable v with text, or NULL: its own index first (the
 * usual case), then any slot with the same text not yet taken by this process. */
static struct rlt__cmd_slot *slot_of(struct rlt__cmd_seg *s, int v, unsigned i, const char *text,
                                     const uint32_t *taken)
{
	if (i < RLT_MAX_RULES_PER_VAR && s->slot[v][i].used && !(*taken & 1u << i) &&
	    !strcmp(s->slot[v][i].text, text))
		return &s->slot[v][i];
	for (unsigned k = 0; k < RLT_MAX_RULES_PER_VAR; k++)
		if (s->slot[v][k].used && !(*taken & 1u << k) && !strcmp(s->slot[v][k].text, text))
			return &s->slot[v][k];
	return NULL;
}

int rlt__cmd_add(const char *name, const struct rlt__ruleset *rs)
{
	struct rlt__cmd_slot *to[RLT_VAR_COUNT][RLT_MAX_RULES_PER_VAR];
	struct rlt__cmd_seg *s = map_seg(name);

	if (!s)
		return -1;
	/* all or nothing: a process with a rule of its own writes its own line, whole */
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		uint32_t taken = 0;
		for (unsigned i = 0; i < rs->n[v]; i++) {
			to[v][i] = slot_of(s, v, i, rs->rules[v][i].rule.text, &taken);
			if (!to[v][i]) {
				munmap(s, sizeof *s);
				return -1;
			}
			taken |= 1u << (to[v][i] - s->slot[v]);
		}
	}
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++)
			rlt__stats_fold(&to[v][i]->sum, rs->rules[v][i].st);
	atomic_fetch_add_explicit(&s->processes, 1, memory_order_relaxed);
	munmap(s, sizeof *s);
	return 0;
}

void rlt__cmd_ruleset(struct rlt__cmd_seg *seg, struct rlt__ruleset *out)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < RLT_MAX_RULES_PER_VAR && seg->slot[v][i].used; i++) {
			struct rlt__rt_rule *r = &out->rules[v][out->n[v]++];
			r->rule.var = (enum rlt_var)v;
			snprintf(r->rule.text, sizeof r->rule.text, "%s", seg->slot[v][i].text);
			r->st = &seg->slot[v][i].sum;
		}
}

int rlt__cmd_remove(const char *name)
{
	char obj[sizeof ((struct dirent *)0)->d_name + 2];
	size_t plen = strlen(RLT_SHM_PREFIX), nlen = strlen(name);
	struct dirent *de;
	int removed = 0;
	DIR *d;

	if (!rlt__cmd_name_ok(name))
		return 0;
	/* the rules' segments first: the command's own is what `shm list` shows as the
	 * command's while any of them is left */
	d = opendir(RLT_SHM_DIR);
	if (d) {
		while ((de = readdir(d)) != NULL) {
			const char *n = de->d_name + plen;
			if (strncmp(de->d_name, RLT_SHM_PREFIX, plen) != 0 || strncmp(n, name, nlen) ||
			    n[nlen] != '.' || !rlt__shm_name_ok(n))
				continue;
			snprintf(obj, sizeof obj, "/%s", de->d_name);
			removed += shm_unlink(obj) == 0;
		}
		closedir(d);
	}
	seg_name(obj, sizeof obj, name);
	removed += shm_unlink(obj) == 0;
	return removed;
}

int rlt__cmd_parse(const char *name, pid_t *pid, uint64_t *start)
{
	unsigned long long p = 0, t = 0;
	const char *s = name;

	if (strncmp(s, "cmd-", 4) != 0)
		return 0;
	s += 4;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		p = p * 10 + (unsigned long long)(*s++ - '0');
	if (*s++ != '-' || *s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		t = t * 10 + (unsigned long long)(*s++ - '0');
	if (*s || p == 0 || p > 0x7fffffff)
		return 0;
	*pid = (pid_t)p;
	*start = t;
	return 1;
}
