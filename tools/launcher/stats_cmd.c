/*
 * stats_cmd.c: `rlthrottle stats [PID|all] [--format json|prometheus]`: one snapshot of the
 * published pages (rlthrottle(1) COMMANDS). The Prometheus form is the text exposition format (version 0.0.4)
 * that node_exporter's textfile collector reads: each family's HELP and TYPE, then its samples,
 * label values escaped (backslash, double quote, newline).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pub_view.h"
#include "stats_cmd.h"

static void usage(FILE *f)
{
	fputs("usage: rlthrottle stats [PID|all] [--format json|prometheus]\n"
	      "One snapshot of the rules and counters of running throttled processes\n"
	      "(all of this user's when no PID is given).\n",
	      f);
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "rlthrottle stats: %s%s%s (see rlthrottle stats --help)\n", msg,
	        arg ? ": " : "", arg ? arg : "");
	return RLT_CLI_EXIT_USAGE;
}

int rlt_cli_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 10)
		return -1;
	long long v = strtoll(s, &end, 10);
	if (v <= 0 || v > 0x7fffffff)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

static void prom_label(FILE *f, const char *name, const char *v, int first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

enum field { F_UNITS, F_CALLS, F_DELAYED, F_REJECTED, F_DELAY_S, F_WOULD_DELAY, F_WOULD_DELAY_S,
             F_WOULD_REJECT, F_LIMIT, F_WAITING, F_OPEN };
/* Which rules a family has samples for: one unit per family (Prometheus' conventions). */
enum which { W_ALL, W_BYTES, W_MSGS, W_CONNS };

static const struct family {
	const char *name, *type, *help;
	enum field field;
	enum which which;
} families[] = {
	{"rlthrottle_bytes_total", "counter", "Bytes charged to the rule (RLT_SEND, RLT_RECV in B).",
	 F_UNITS, W_BYTES},
	{"rlthrottle_messages_total", "counter",
	 "Messages charged to the rule (RLT_SEND, RLT_RECV in msg).", F_UNITS, W_MSGS},
	{"rlthrottle_connections_total", "counter",
	 "Connections charged to the rule (RLT_CONNECT: attempts; RLT_ACCEPT; RLT_CONNS: opened).",
	 F_UNITS, W_CONNS},
	{"rlthrottle_calls_total", "counter", "Calls the rule applied to.", F_CALLS, W_ALL},
	{"rlthrottle_delayed_total", "counter", "Calls the rule made wait before they went ahead.",
	 F_DELAYED, W_ALL},
	{"rlthrottle_rejected_total", "counter", "Calls the rule failed.", F_REJECTED, W_ALL},
	{"rlthrottle_delay_seconds_total", "counter", "Seconds calls waited for the rule, in all.",
	 F_DELAY_S, W_ALL},
	{"rlthrottle_would_delay_total", "counter",
	 "Calls action=delay would have made wait (action=dry-run).", F_WOULD_DELAY, W_ALL},
	{"rlthrottle_would_delay_seconds_total", "counter",
	 "Seconds action=delay would have made calls wait (action=dry-run).", F_WOULD_DELAY_S, W_ALL},
	{"rlthrottle_would_reject_total", "counter",
	 "Calls action=reject would have failed (action=dry-run).", F_WOULD_REJECT, W_ALL},
	{"rlthrottle_limit_bytes_per_second", "gauge", "The rule's limit in bytes a second.",
	 F_LIMIT, W_BYTES},
	{"rlthrottle_limit_messages_per_second", "gauge", "The rule's limit in messages a second.",
	 F_LIMIT, W_MSGS},
	{"rlthrottle_limit_connections_per_second", "gauge",
	 "The rule's limit in connections (RLT_CONNECT: attempts) a second.", F_LIMIT, W_CONNS},
	{"rlthrottle_limit_open_connections", "gauge",
	 "RLT_CONNS: the connections the rule lets be open at once.", F_LIMIT, W_CONNS},
	{"rlthrottle_open_connections", "gauge",
	 "RLT_CONNS: the connections open now that the rule counts.", F_OPEN, W_CONNS},
	{"rlthrottle_waiting_threads", "gauge", "Threads waiting for the rule now.", F_WAITING,
	 W_ALL},
};

/* Whether family fa has a sample for rule r. */
static int in_family(const struct family *fa, const struct rlt__pub_rule *r)
{
	int conns = r->var == RLT_VAR_CONNS;
	switch (fa->which) {
	case W_BYTES: return r->params.unit == RLT_UNIT_BYTES;
	case W_MSGS: return r->params.unit == RLT_UNIT_MSGS;
	case W_CONNS:
		if (fa->field == F_OPEN) /* key= rules count per key, not in all */
			return conns && !r->params.keys;
		if (fa->field == F_LIMIT) /* a rate, or a count open at once */
			return !strcmp(fa->name, "rlthrottle_limit_open_connections") ? conns
			       : !conns && r->params.unit != RLT_UNIT_BYTES &&
			                 r->params.unit != RLT_UNIT_MSGS;
		return r->params.unit != RLT_UNIT_BYTES && r->params.unit != RLT_UNIT_MSGS;
	default: return 1;
	}
}

static void prom_value(FILE *f, const struct rlt__pub_rule *r, enum field fl)
{
	switch (fl) {
	case F_UNITS: fprintf(f, "%llu", (unsigned long long)r->units); break;
	case F_CALLS: fprintf(f, "%llu", (unsigned long long)r->calls); break;
	case F_DELAYED: fprintf(f, "%llu", (unsigned long long)r->delayed); break;
	case F_REJECTED: fprintf(f, "%llu", (unsigned long long)r->rejected); break;
	case F_DELAY_S: fprintf(f, "%.9f", (double)r->delay_ns_total / 1e9); break;
	case F_WOULD_DELAY: fprintf(f, "%llu", (unsigned long long)r->would_delay); break;
	case F_WOULD_DELAY_S: fprintf(f, "%.9f", (double)r->would_delay_ns_total / 1e9); break;
	case F_WOULD_REJECT: fprintf(f, "%llu", (unsigned long long)r->would_reject); break;
	case F_LIMIT:
		if (r->var == RLT_VAR_CONNS)
			fprintf(f, "%llu", (unsigned long long)r->params.rate_num);
		else
			fprintf(f, "%.9g", rlt_cli_limit_per_s(r));
		break;
	case F_WAITING: fprintf(f, "%llu", (unsigned long long)r->waiting); break;
	case F_OPEN: fprintf(f, "%llu", (unsigned long long)r->open); break;
	}
}

/* Two rules of one variable written alike would make two samples with one label set (which
 * the format forbids): the later ones get an `index` label. */
static int same_text_before(const struct rlt_cli_proc *p, unsigned k)
{
	for (unsigned j = 0; j < k; j++)
		if (p->rules[j].var == p->rules[k].var &&
		    !strcmp(p->rules[j].params.text, p->rules[k].params.text))
			return 1;
	return 0;
}

/* A family's HELP and TYPE lines. */
static void prom_head(FILE *f, const char *name, const char *help, const char *type)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample's name and its process's labels (pid, comm), the brace left open. */
static void proc_labels(FILE *f, const char *name, const struct rlt_cli_proc *pr)
{
	char pid[16];

	snprintf(pid, sizeof pid, "%d", (int)pr->pid);
	fprintf(f, "%s{", name);
	prom_label(f, "pid", pid, 1);
	prom_label(f, "comm", pr->comm, 0);
}

/* A sample's name and its rule's labels, the brace left open: the process's, var, rule, and an
 * `index` when a rule of the same variable before it reads the same (dup: known already, -1:
 * ask). */
static void rule_labels(FILE *f, const char *name, const struct rlt_cli_proc *pr, unsigned k,
                        int dup)
{
	const struct rlt__pub_rule *r = &pr->rules[k];

	proc_labels(f, name, pr);
	prom_label(f, "var", rlt_var_name(r->var), 0);
	prom_label(f, "rule", r->params.text, 0);
	prom_label(f, "action", r->params.action == RLT_ACTION_REJECT    ? "reject"
	                        : r->params.action == RLT_ACTION_DRY_RUN ? "dry-run"
	                                                                 : "delay",
	           0);
	if (dup < 0 ? same_text_before(pr, k) : dup) {
		char idx[16];
		snprintf(idx, sizeof idx, "%u", r->index + 1); /* from 1, as set VAR#N */
		prom_label(f, "index", idx, 0);
	}
}

/* The busiest keys of keyed rules (RLT_PUB_BUSIEST per rule at most): one family per figure,
 * a `key` label on each sample. which: 0 units, 1 would-delay seconds, 2 would-reject (the last
 * two for action=dry-run rules only). */
static void prom_keys(FILE *f, const struct rlt_cli_snap *sn, const unsigned char *dup, int which)
{
	static const char *const names[] = {"rlthrottle_key_units_total",
	                                    "rlthrottle_key_would_delay_seconds_total",
	                                    "rlthrottle_key_would_reject_total"};
	static const char *const helps[] = {
		"Units charged to one of a keyed rule's busiest keys since it took its slot.",
		"Seconds delay would have made one busiest key's calls wait (action=dry-run).",
		"Calls of one busiest key reject would have refused (action=dry-run)."};
	size_t at = 0;

	prom_head(f, names[which], helps[which], "counter");
	for (unsigned p = 0; p < sn->n; p++) {
		const struct rlt_cli_proc *pr = &sn->procs[p];
		for (unsigned k = 0; k < pr->n; k++) {
			const struct rlt__pub_rule *r = &pr->rules[k];
			if (r->var >= RLT_VAR_COUNT || r->params_torn || !r->params.keys ||
			    (which && r->params.action != RLT_ACTION_DRY_RUN))
				continue;
			for (unsigned j = 0; j < r->nbusy; j++) {
				rule_labels(f, names[which], pr, k, dup ? dup[at + k] : -1);
				prom_label(f, "key", r->busy[j].key, 0);
				if (which == 0)
					fprintf(f, "} %llu\n", (unsigned long long)r->busy[j].units);
				else if (which == 1)
					fprintf(f, "} %.9f\n", (double)r->busy[j].would_delay_ns / 1e9);
				else
					fprintf(f, "} %llu\n", (unsigned long long)r->busy[j].would_reject);
			}
		}
		at += pr->n;
	}
}

/* RLT_NET: a sample per process that has conditions or had, for each thing they did, and one
 * per condition in force (its text in a label, value 1). */
static void prom_net(FILE *f, const struct rlt_cli_snap *sn)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} nf[] = {
		{"rlthrottle_net_dropped_total", "Datagrams RLT_NET's loss dropped.",
		 offsetof(struct rlt__net_stats, dropped)},
		{"rlthrottle_net_resets_total", "Connections RLT_NET's reset cut.",
		 offsetof(struct rlt__net_stats, resets)},
		{"rlthrottle_net_slices_total", "Calls RLT_NET's slice cut short.",
		 offsetof(struct rlt__net_stats, slices)},
		{"rlthrottle_net_hangs_total", "Calls RLT_NET's hang held.",
		 offsetof(struct rlt__net_stats, hangs)},
		{"rlthrottle_net_connects_refused_total", "Connects RLT_NET's connect=refuse failed.",
		 offsetof(struct rlt__net_stats, refused)},
		{"rlthrottle_net_connects_timed_out_total",
		 "Connects RLT_NET's connect=timeout failed.", offsetof(struct rlt__net_stats, timeouts)},
	};
	for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++) {
		prom_head(f, nf[i].name, nf[i].help, "counter");
		for (unsigned p = 0; p < sn->n; p++) {
			const struct rlt_cli_proc *pr = &sn->procs[p];
			if (!rlt_cli_net_shown(pr))
				continue;
			proc_labels(f, nf[i].name, pr);
			fprintf(f, "} %llu\n",
			        (unsigned long long)*(const uint64_t *)((const char *)&pr->net + nf[i].off));
		}
	}
	prom_head(f, "rlthrottle_net_condition", "An RLT_NET condition in force (value 1).", "gauge");
	for (unsigned p = 0; p < sn->n; p++) {
		const struct rlt_cli_proc *pr = &sn->procs[p];
		for (unsigned c = 0; c < pr->net_n; c++) {
			unsigned d = 0;
			while (d < c && strcmp(pr->net_cond[d], pr->net_cond[c]))
				d++;
			if (d < c)
				continue; /* written twice: one sample per label set */
			proc_labels(f, "rlthrottle_net_condition", pr);
			prom_label(f, "condition", pr->net_cond[c], 0);
			fputs("} 1\n", f);
		}
	}
}

static void prometheus(FILE *f, const struct rlt_cli_snap *sn)
{
	/* same_text_before once per rule, not once per family (NULL: no memory, asked each time) */
	size_t total = 0, at;
	for (unsigned p = 0; p < sn->n; p++)
		total += sn->procs[p].n;
	unsigned char *dup = calloc(total ? total : 1, 1);
	if (dup) {
		at = 0;
		for (unsigned p = 0; p < sn->n; p++)
			for (unsigned k = 0; k < sn->procs[p].n; k++)
				dup[at++] = (unsigned char)same_text_before(&sn->procs[p], k);
	}
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		const struct family *fa = &families[i];
		prom_head(f, fa->name, fa->help, fa->type);
		at = 0;
		for (unsigned p = 0; p < sn->n; p++) {
			const struct rlt_cli_proc *pr = &sn->procs[p];
			for (unsigned k = 0; k < pr->n; k++) {
				const struct rlt__pub_rule *r = &pr->rules[k];
				if (r->var >= RLT_VAR_COUNT || r->params_torn)
					continue; /* a malformed record: nothing true to say */
				if (!in_family(fa, r))
					continue;
				rule_labels(f, fa->name, pr, k, dup ? dup[at + k] : -1);
				fputs("} ", f);
				prom_value(f, r, fa->field);
				fputc('\n', f);
			}
			at += pr->n;
		}
	}
	for (int which = 0; which < 3; which++)
		prom_keys(f, sn, dup, which);
	prom_net(f, sn);
	free(dup);
}

int rlt_cli_stats(int argc, char **argv)
{
	const char *format = "json";
	pid_t pid = 0;
	int have_target = 0;
	struct rlt_cli_snap sn;
	struct rlt_error err;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v)
				return bad("--format needs a value (json or prometheus)", NULL);
			if (strcmp(v, "json") && strcmp(v, "prometheus"))
				return bad("--format must be json or prometheus, not", v);
			format = v;
			continue;
		}
		if (a[0] == '-')
			return bad("unknown option", a);
		if (have_target)
			return bad("one PID (or all) at most; extra argument", a);
		have_target = 1;
		if (strcmp(a, "all") != 0 && rlt_cli_parse_pid(a, &pid) != 0)
			return bad("not a PID (digits) nor all", a);
	}
	rlt_cli_guard_sigbus();
	if (rlt_cli_snap_take(&sn, pid ? &pid : NULL, pid ? 1 : 0, 1, 0, &err) != 0) {
		fprintf(stderr, "rlthrottle stats: %s\n", err.msg);
		return RLT_CLI_EXIT_USAGE;
	}
	if (sn.other_layout)
		fprintf(stderr, "rlthrottle stats: left out: %s\n", sn.other_msg);
	if (!strcmp(format, "json"))
		rlt_cli_snap_json(stdout, &sn);
	else
		prometheus(stdout, &sn);
	rlt_cli_snap_free(&sn);
	return fflush(stdout) == 0 ? 0 : 1;
}
