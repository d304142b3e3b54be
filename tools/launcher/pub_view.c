/*
 * pub_view.c: snapshots of the published pages, and their numbers in units people read. The
 * pages are read through src/publish.c, which bounds everything in them; what is here only
 * formats.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "proc_stat.h"
#include "pub_view.h"
#include "stats.h"

static void read_comm(pid_t pid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		n = 0;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	/* shown on a terminal: no control characters from another program's name */
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* Pages kept open between frames of the live view: opening and mapping a page every second
 * (above all its munmap) was most of top's cost over 100 processes. */
struct kept {
	struct rlt__pub_reader rd;
	char comm[64];
	int used;
};
static struct kept *cache;
static unsigned ncache;

static struct kept *cached(pid_t pid, uint64_t start)
{
	for (unsigned i = 0; i < ncache; i++)
		if (cache[i].rd.hdr.pid == (int32_t)pid && cache[i].rd.hdr.proc_start == start)
			return &cache[i];
	return NULL;
}

static void cache_sweep(int all)
{
	unsigned w = 0;
	for (unsigned i = 0; i < ncache; i++) {
		if (cache[i].used && !all) {
			cache[i].used = 0;
			cache[w++] = cache[i];
		} else {
			rlt__pub_close(&cache[i].rd);
		}
	}
	ncache = w;
}

/* p's conditions one by one: "; " apart in the page's text (a condition's text has no ';',
 * which separates them in RLT_NET). */
static void net_split(struct rlt_cli_proc *p)
{
	p->net_n = 0;
	for (const char *s = p->net_text, *e; *s && p->net_n < RLT_NET_MAX; s = *e ? e + 2 : e) {
		e = strstr(s, "; ");
		if (!e)
			e = s + strlen(s);
		snprintf(p->net_cond[p->net_n++], sizeof p->net_cond[0], "%.*s", (int)(e - s), s);
	}
}

static int add_proc(struct rlt_cli_snap *sn, pid_t pid, uint64_t start, int keep,
                    struct rlt_error *err)
{
	struct rlt__pub_reader own, *rd = &own;
	struct kept *k = keep ? cached(pid, start) : NULL;
	char comm[64];

	if (!k) {
		int rc = rlt__pub_open(pid, 0, &own, err);
		if (rc)
			return rc;
		read_comm(pid, comm, sizeof comm);
		if (keep) {
			struct kept *grown = realloc(cache, (ncache + 1) * sizeof *cache);
			if (grown) {
				cache = grown;
				k = &cache[ncache++];
				k->rd = own;
				memcpy(k->comm, comm, sizeof comm);
			}
		}
	}
	if (k) {
		k->used = 1;
		rd = &k->rd;
		memcpy(comm, k->comm, sizeof comm);
	}
	struct rlt_cli_proc *p = &sn->procs[sn->n];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->started_unix_ns = rd->hdr.started_unix_ns;
	p->started_ns = rd->hdr.started_ns;
	memcpy(p->comm, comm, sizeof comm);
	rlt__pub_read_net(rd, &p->net, p->net_text, sizeof p->net_text);
	net_split(p);
	p->rules = calloc(rd->nrules ? rd->nrules : 1, sizeof *p->rules);
	if (p->rules)
		for (unsigned j = 0; j < rd->nrules; j++)
			rlt__pub_read(rd, j, sn->now, &p->rules[p->n++]);
	if (!k)
		rlt__pub_close(&own);
	if (!p->rules)
		return rlt__fail(err, -ENOMEM, "out of memory");
	sn->n++;
	return 0;
}

/* Fills sn->shared from sn->procs. */
static void snap_shared(struct rlt_cli_snap *sn);

int rlt_cli_snap_take(struct rlt_cli_snap *sn, const pid_t *pids, unsigned npids, int strict,
                      int keep, struct rlt_error *err)
{
	pid_t found[4096];
	uint64_t starts[4096];
	const pid_t *list = pids;
	unsigned n = npids;

	memset(sn, 0, sizeof *sn);
	if (npids == 0) {
		int k = rlt__pub_list(found, starts, sizeof found / sizeof found[0]);
		if (k < 0)
			return rlt__fail(err, -1, "cannot list %s: %s", RLT_PUB_DIR, strerror(-k));
		n = (unsigned)k < sizeof found / sizeof found[0] ? (unsigned)k
		                                                  : sizeof found / sizeof found[0];
		list = found;
	} else {
		for (unsigned i = 0; i < npids; i++) {
			struct rlt__proc_stat ps;
			starts[i] = rlt__proc_stat(pids[i], &ps) == 0 ? ps.start : 0;
		}
	}
	sn->procs = calloc(n ? n : 1, sizeof *sn->procs);
	if (!sn->procs)
		return rlt__fail(err, -1, "out of memory");
	sn->now = rlt__now();
	for (unsigned i = 0; i < n; i++) {
		struct rlt_error e;
		int rc = add_proc(sn, list[i], starts[i], keep, &e);
		if (rc == -EPROTO && !sn->other_layout++)
			snprintf(sn->other_msg, sizeof sn->other_msg, "%s", e.msg);
		if (rc != 0 && (strict && npids)) {
			*err = e;
			rlt_cli_snap_free(sn);
			cache_sweep(1);
			return -1;
		}
	}
	if (keep)
		cache_sweep(0); /* the pages of processes that ended */
	if (sn->other_layout > 1) {
		size_t l = strlen(sn->other_msg);
		snprintf(sn->other_msg + l, sizeof sn->other_msg - l, " (and %u more)",
		         sn->other_layout - 1);
	}
	snap_shared(sn);
	return 0;
}

void rlt_cli_snap_free(struct rlt_cli_snap *sn)
{
	for (unsigned i = 0; i < sn->n; i++)
		free(sn->procs[i].rules);
	free(sn->procs);
	for (unsigned i = 0; i < sn->nshared; i++)
		free(sn->shared[i].rules);
	free(sn->shared);
	memset(sn, 0, sizeof *sn);
}

/* "shared:NAME" of a rule's text (the scope as written), or NULL. */
static const char *shared_name(const struct rlt__pub_rule *r, char *out, size_t len)
{
	const char *k = strstr(r->params.text, "scope=shared:");
	if (!k || r->params.scope != RLT_SCOPE_SHARED)
		return NULL;
	k += 6;
	size_t n = strcspn(k, " \t;");
	snprintf(out, len, "%.*s", (int)n, k);
	return out;
}

static void snap_shared(struct rlt_cli_snap *sn)
{
	for (unsigned i = 0; i < sn->n; i++)
		for (unsigned k = 0; k < sn->procs[i].n; k++) {
			const struct rlt__pub_rule *r = &sn->procs[i].rules[k];
			char name[64];
			if (r->var >= RLT_VAR_COUNT || !shared_name(r, name, sizeof name))
				continue;
			struct rlt_cli_proc *t = NULL;
			for (unsigned j = 0; j < sn->nshared; j++)
				if (!strcmp(sn->shared[j].comm, name) && sn->shared[j].rules[0].var == r->var)
					t = &sn->shared[j];
			if (!t) {
				struct rlt_cli_proc *g = realloc(sn->shared, (sn->nshared + 1) * sizeof *g);
				if (!g)
					return;
				sn->shared = g;
				t = &sn->shared[sn->nshared];
				memset(t, 0, sizeof *t);
				t->rules = calloc(1, sizeof *t->rules);
				if (!t->rules)
					return;
				sn->nshared++;
				snprintf(t->comm, sizeof t->comm, "%s", name);
				t->n = 1;
				t->rules[0] = *r;
				t->started_ns = sn->procs[i].started_ns;
				t->started_unix_ns = sn->procs[i].started_unix_ns;
				continue;
			}
			struct rlt__pub_rule *a = &t->rules[0];
			a->calls += r->calls;
			a->allowed += r->allowed;
			a->delayed += r->delayed;
			a->rejected += r->rejected;
			a->units += r->units;
			a->delay_ns_total += r->delay_ns_total;
			if (r->delay_ns_max > a->delay_ns_max)
				a->delay_ns_max = r->delay_ns_max;
			a->would_delay += r->would_delay;
			a->would_delay_ns_total += r->would_delay_ns_total;
			a->would_reject += r->would_reject;
			if (r->would_delay_ns_max > a->would_delay_ns_max)
				a->would_delay_ns_max = r->would_delay_ns_max;
			a->waiting += r->waiting;
			for (unsigned s = 0; s < RLT_PUB_HIST; s++)
				a->per_sec[s] += r->per_sec[s];
			if (sn->procs[i].started_ns < t->started_ns) {
				t->started_ns = sn->procs[i].started_ns;
				t->started_unix_ns = sn->procs[i].started_unix_ns;
			}
		}
}

double rlt_cli_limit_per_s(const struct rlt__pub_rule *r)
{
	if (r->params_torn || r->var == RLT_VAR_CONNS || r->params.rate_den_ns == 0)
		return 0;
	return (double)r->params.rate_num * 1e9 / (double)r->params.rate_den_ns;
}

double rlt_cli_rate_since_start(const struct rlt_cli_snap *sn, const struct rlt_cli_proc *p,
                                const struct rlt__pub_rule *r)
{
	double secs = sn->now > p->started_ns ? (double)(sn->now - p->started_ns) / 1e9 : 0;
	return secs > 0.001 ? (double)r->units / secs : 0;
}

/* The unit's short name for JSON: "B", "msg", "call", "conn". */
static const char *unit_name(const struct rlt__pub_rule *r)
{
	switch (r->params.unit) {
	case RLT_UNIT_BYTES: return "B";
	case RLT_UNIT_MSGS: return "msg";
	case RLT_UNIT_CONNS: return "conn";
	default: return r->var == RLT_VAR_CONNECT || r->var == RLT_VAR_ACCEPT ? "conn" : "call";
	}
}

static const char *scope_name(unsigned scope)
{
	static const char *const names[] = {"process", "connection", "shared", "redis"};
	return scope < 4 ? names[scope] : "?";
}

void rlt_cli_fmt_rate(char *buf, size_t len, double v, const struct rlt__pub_rule *r)
{
	if (r->params.unit == RLT_UNIT_BYTES) {
		static const char *const u[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
		unsigned i = 0;
		while (v >= 1000 && i < 4) {
			v /= 1024;
			i++;
		}
		/* three figures at most: "1.00 MiB/s", "64.0 KiB/s", "999 KiB/s" fit 10 columns */
		snprintf(buf, len, !i || v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v,
		         u[i]);
		return;
	}
	const char *name = unit_name(r);
	if (v >= 100 || v == 0)
		snprintf(buf, len, "%.0f %s/s", v, name);
	else
		snprintf(buf, len, "%.3g %s/s", v, name);
}

void rlt_cli_fmt_limit(char *buf, size_t len, const struct rlt__pub_rule *r)
{
	if (r->params_torn)
		snprintf(buf, len, "?");
	else if (r->var == RLT_VAR_CONNS)
		snprintf(buf, len, "%llu open", (unsigned long long)r->params.rate_num);
	else
		rlt_cli_fmt_rate(buf, len, rlt_cli_limit_per_s(r), r);
}

/* A JSON string (quoted, escaped). */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int rlt_cli_net_shown(const struct rlt_cli_proc *p)
{
	const struct rlt__net_stats *n = &p->net;
	return p->net_n || n->dropped || n->resets || n->slices || n->refused ||
	       n->timeouts || n->hangs;
}

/* RLT_NET's object, as the summary writes it (rlthrottle(7) STATISTICS), when the process has
 * conditions or had. */
static void json_net(FILE *f, const struct rlt_cli_proc *p)
{
	const struct rlt__net_stats *n = &p->net;

	if (!rlt_cli_net_shown(p))
		return;
	fprintf(f, ",\"net\":{\"conditions\":[");
	for (unsigned i = 0; i < p->net_n; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_str(f, p->net_cond[i]);
	}
	fprintf(f, "],\"dropped\":%llu,\"resets\":%llu,\"slices\":%llu,\"hangs\":%llu,"
	           "\"connects_refused\":%llu,\"connects_timed_out\":%llu}",
	        (unsigned long long)n->dropped, (unsigned long long)n->resets,
	        (unsigned long long)n->slices, (unsigned long long)n->hangs,
	        (unsigned long long)n->refused, (unsigned long long)n->timeouts);
}

void rlt_cli_snap_json(FILE *f, const struct rlt_cli_snap *sn)
{
	fprintf(f, "{\"schema\":%d,\"processes\":[", RLT_STATS_SCHEMA);
	for (unsigned i = 0; i < sn->n; i++) {
		const struct rlt_cli_proc *p = &sn->procs[i];
		fprintf(f, "%s\n {\"pid\":%d,\"comm\":", i ? "," : "", (int)p->pid);
		json_str(f, p->comm);
		fprintf(f, ",\"started_unix_ns\":%llu,\"rules\":[",
		        (unsigned long long)p->started_unix_ns);
		for (unsigned k = 0; k < p->n; k++) {
			const struct rlt__pub_rule *r = &p->rules[k];
			fprintf(f, "%s\n  {\"variable\":", k ? "," : "");
			json_str(f, r->var < RLT_VAR_COUNT ? rlt_var_name(r->var) : "?");
			fprintf(f, ",\"index\":%u,\"rule\":", r->index + 1); /* from 1, as set VAR#N */
			json_str(f, r->params.text);
			fprintf(f, ",\"algo\":");
			json_str(f, r->params_torn ? "?" : rlt_algo_name(r->params.algo));
			fprintf(f, ",\"scope\":\"%s\",\"action\":\"%s\",\"unit\":\"%s\"",
			        scope_name(r->params.scope),
			        r->params.action == RLT_ACTION_REJECT    ? "reject"
			        : r->params.action == RLT_ACTION_DRY_RUN ? "dry-run"
			                                                 : "delay",
			        unit_name(r));
			if (r->var == RLT_VAR_CONNS && !r->params.keys)
				fprintf(f, ",\"limit_open\":%llu,\"open\":%llu",
				        (unsigned long long)r->params.rate_num, (unsigned long long)r->open);
			else if (r->var == RLT_VAR_CONNS)
				fprintf(f, ",\"limit_open\":%llu", (unsigned long long)r->params.rate_num);
			else
				fprintf(f, ",\"limit_units_per_second\":%.10g,\"burst\":%llu",
				        rlt_cli_limit_per_s(r), (unsigned long long)r->params.burst);
			fprintf(f,
			        ",\"calls\":%llu,\"allowed\":%llu,\"delayed\":%llu,\"rejected\":%llu,"
			        "\"units\":%llu,\"delay_ns_total\":%llu,\"delay_ns_max\":%llu,"
			        "\"would_delay\":%llu,\"would_delay_ns_total\":%llu,"
			        "\"would_delay_ns_max\":%llu,\"would_reject\":%llu,\"waiting\":%llu",
			        (unsigned long long)r->calls, (unsigned long long)r->allowed,
			        (unsigned long long)r->delayed, (unsigned long long)r->rejected,
			        (unsigned long long)r->units, (unsigned long long)r->delay_ns_total,
			        (unsigned long long)r->delay_ns_max, (unsigned long long)r->would_delay,
			        (unsigned long long)r->would_delay_ns_total,
			        (unsigned long long)r->would_delay_ns_max,
			        (unsigned long long)r->would_reject, (unsigned long long)r->waiting);
			if (r->params.keys)
				fprintf(f, ",\"keys\":%llu,\"keys_tracked\":%llu,\"keys_evicted\":%llu",
				        (unsigned long long)r->params.keys,
				        (unsigned long long)r->keys_tracked,
				        (unsigned long long)r->keys_evicted);
			if (r->params.keys) {
				fprintf(f, ",\"busiest\":[");
				for (unsigned j = 0; j < r->nbusy; j++) {
					fprintf(f, "%s{\"key\":", j ? "," : "");
					json_str(f, r->busy[j].key);
					fprintf(f, ",\"units\":%llu", (unsigned long long)r->busy[j].units);
					if (r->params.action == RLT_ACTION_DRY_RUN)
						fprintf(f, ",\"would_delay_ns\":%llu,\"would_reject\":%llu",
						        (unsigned long long)r->busy[j].would_delay_ns,
						        (unsigned long long)r->busy[j].would_reject);
					fprintf(f, "}");
				}
				fprintf(f, "]");
			}
			fprintf(f, ",\"rate_last_second\":%llu,\"rate_since_start\":%.10g,\"history\":[",
			        (unsigned long long)r->per_sec[RLT_PUB_HIST - 1],
			        rlt_cli_rate_since_start(sn, p, r));
			for (unsigned s = 0; s < RLT_PUB_HIST; s++)
				fprintf(f, "%s%llu", s ? "," : "", (unsigned long long)r->per_sec[s]);
			fprintf(f, "]}");
		}
		fprintf(f, "]");
		json_net(f, p);
		fprintf(f, "}");
	}
	fprintf(f, "\n],\"shared\":[");
	for (unsigned i = 0; i < sn->nshared; i++) {
		const struct rlt_cli_proc *p = &sn->shared[i];
		const struct rlt__pub_rule *r = &p->rules[0];
		fprintf(f, "%s\n {\"scope\":", i ? "," : "");
		json_str(f, p->comm);
		fprintf(f, ",\"variable\":\"%s\",\"calls\":%llu,\"delayed\":%llu,\"rejected\":%llu,"
		           "\"units\":%llu,\"would_delay\":%llu,\"would_reject\":%llu,"
		           "\"waiting\":%llu,\"rate_last_second\":%llu,\"history\":[",
		        rlt_var_name(r->var), (unsigned long long)r->calls,
		        (unsigned long long)r->delayed, (unsigned long long)r->rejected,
		        (unsigned long long)r->units, (unsigned long long)r->would_delay,
		        (unsigned long long)r->would_reject, (unsigned long long)r->waiting,
		        (unsigned long long)r->per_sec[RLT_PUB_HIST - 1]);
		for (unsigned s = 0; s < RLT_PUB_HIST; s++)
			fprintf(f, "%s%llu", s ? "," : "", (unsigned long long)r->per_sec[s]);
		fprintf(f, "]}");
	}
	fprintf(f, "\n]}\n");
}

void (*rlt_cli_before_fatal)(void);

static void on_sigbus(int sig)
{
	static const char msg[] = "rlthrottle: a published page was truncated while read: stop\n";
	(void)sig;
	if (rlt_cli_before_fatal)
		rlt_cli_before_fatal(); /* top: the terminal back as it was */
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

void rlt_cli_guard_sigbus(void)
{
	struct sigaction sa = {.sa_handler = on_sigbus};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}
