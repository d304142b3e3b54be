/*
 * check.c: the rules as the library will take them, checked before anything runs (and printed
 * by --check), with the same parser and the same RLT_ON_ERROR handling.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net.h"
#include "policy.h"
#include "rlthrottle.h"
#include "scope_redis.h"
#include "settings.h"

/* --check: whether a redis rule's server answers, said beside the rule. */
static const char *redis_status(const struct rlt_rule *r)
{
	static char out[700];
	struct rlt_error err;

	if (rlt__redis_ping(r->redis_host, r->redis_port, r->redis_user, r->redis_pass, 200,
	                    &err) == 0)
		snprintf(out, sizeof out, "redis %s:%u answers", r->redis_host, (unsigned)r->redis_port);
	else
		snprintf(out, sizeof out, "redis %s:%u does not answer (%s): fallback=%s would apply",
		         r->redis_host, (unsigned)r->redis_port, err.msg,
		         r->fallback == RLT_FALLBACK_ALLOW ? "allow"
		         : r->fallback == RLT_FALLBACK_DENY ? "deny" : "local");
	return out;
}

/* One rule of a variable, checked as the library will build it. 0, or -1 with err filled. */
static int check_one(enum rlt_var v, const char *text, struct rlt_rule *rules, size_t *n,
                     int seccomp, struct rlt_error *err)
{
	if (rlt_rules_parse(v, text, rules, RLT_MAX_RULES_PER_VAR, n, err) != 0)
		return -1;
	for (size_t i = 0; i < *n; i++) {
		const char *why = seccomp ? rlt__rule_unsupported_trap(&rules[i])
		                          : rlt__rule_unsupported(&rules[i]);
		if (why) {
			snprintf(err->msg, sizeof err->msg, "%s=\"%.300s\": %s", rlt_var_name(v),
			         rules[i].text, why);
			return -1;
		}
	}
	return 0;
}

/* Byte units and what one of them holds: the burst is said in the rate's unit when it is a
 * whole number of it. */
static const struct {
	const char *name;
	uint64_t bytes;
} byte_units[] = {
	{"B", 1},           {"kB", 1000},         {"MB", 1000000},       {"GB", 1000000000},
	{"TB", 1000000000000ull}, {"KiB", 1024},  {"MiB", 1048576},      {"GiB", 1073741824},
	{"TiB", 1099511627776ull}, {"kbit", 125}, {"Mbit", 125000},      {"Gbit", 125000000},
	{"Tbit", 125000000000ull},
};

/*
 * The canonical form of a rule, its rate and burst in the unit the rule was written in
 * (`1MiB/s burst=1MiB`, not `1048576B/s burst=1048576B`): the rate is the rule's own first
 * word, the rest the parser's canonical keys, the defaults made explicit.
 */
static void as_written(const struct rlt_rule *r, char *out, size_t len)
{
	char canon[1024], rate[128];
	const char *rest, *b;
	size_t rl = strcspn(r->text + strspn(r->text, " \t"), " \t");

	rlt_rule_format(r, canon, sizeof canon);
	snprintf(rate, sizeof rate, "%.*s", (int)rl, r->text + strspn(r->text, " \t"));
	rest = canon + strcspn(canon, " ");
	/* the unit as written: the letters before the '/' */
	const char *slash = strchr(rate, '/'), *u = slash;
	while (u && u > rate && ((u[-1] >= 'a' && u[-1] <= 'z') || (u[-1] >= 'A' && u[-1] <= 'Z')))
		u--;
	uint64_t per = 0;
	for (size_t i = 0; u && i < sizeof byte_units / sizeof byte_units[0]; i++)
		if ((size_t)(slash - u) == strlen(byte_units[i].name) &&
		    !strncmp(u, byte_units[i].name, (size_t)(slash - u)))
			per = byte_units[i].bytes;
	b = strstr(rest, " burst=");
	unsigned long long burst;
	char *end;
	if (per > 1 && b && (burst = strtoull(b + 7, &end, 10), *end == 'B') && burst % per == 0) {
		snprintf(out, len, "%s%.*s burst=%llu%.*s%s", rate, (int)(b - rest), rest,
		         burst / per, (int)(slash - u), u, end + 1);
		return;
	}
	snprintf(out, len, "%s%s", rate, rest);
}

static void print_rules(enum rlt_var v, const struct rlt_rule *rules, size_t n)
{
	const char *name = rlt_var_name(v);

	for (size_t i = 0; i < n; i++) {
		char canon[1200];
		as_written(&rules[i], canon, sizeof canon);
		if (rules[i].scope == RLT_SCOPE_REDIS)
			printf("%s: %s  # %s\n", name, canon, redis_status(&rules[i]));
		else
			printf("%s: %s\n", name, canon);
	}
}

/*
 * Checks the settings and every variable as the library (or the handler of --seccomp) will at
 * load. A bad setting, or a bad rule under RLT_ON_ERROR=exit, prints its one line and returns -1.
 * Under RLT_ON_ERROR=ignore the run leaves a bad rule out with a warning, which the library or
 * the handler prints itself; --check (print) prints that warning here, and still returns -1: the
 * rule is not valid.
 */
int rlt_cli_check_rules(int print, int seccomp)
{
	static struct rlt_rule rules[RLT_MAX_RULES_PER_VAR];
	struct rlt__settings set;
	struct rlt_error err;
	size_t n;
	int bad = 0, printed = 0;

	if (rlt__settings_read(&set, &err) != 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		return -1;
	}
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		const char *val = getenv(rlt_var_name((enum rlt_var)v));
		if (!val || val[strspn(val, " \t;")] == '\0') /* unset, as the library has it */
			continue;
		if (!set.ignore_bad) {
			if (check_one((enum rlt_var)v, val, rules, &n, seccomp, &err) != 0) {
				fprintf(stderr, "rlthrottle: %s\n", err.msg);
				return -1;
			}
			if (print)
				print_rules((enum rlt_var)v, rules, n);
			printed += (int)n;
			continue;
		}
		/* one rule at a time, as the library's RLT_ON_ERROR=ignore does */
		char one[RLT_VALUE_MAX + 1];
		for (const char *p = val; rlt__rule_next(&p, one);) {
			if (check_one((enum rlt_var)v, one, rules, &n, seccomp, &err) != 0) {
				bad = 1;
				if (print && set.loglevel >= RLT_LOG_WARN)
					fprintf(stderr, "rlthrottle: %s (rule ignored: RLT_ON_ERROR=ignore)\n",
					        err.msg);
			} else {
				if (print)
					print_rules((enum rlt_var)v, rules, n);
				printed += (int)n;
			}
		}
	}
	/* RLT_NET: the network conditions, refused whole when one is bad (the library stops
	 * at a bad one whatever RLT_ON_ERROR says: a test under a condition it did not get would
	 * prove nothing) */
	static struct rlt__net_set net;
	if (rlt__net_parse(getenv(RLT_NET_VAR), &net, &err) != 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		return -1;
	}
	for (unsigned i = 0; i < net.n; i++) {
		const char *why = rlt__net_unsupported(&net.c[i]);
		if (why) {
			fprintf(stderr, "rlthrottle: %s=\"%.200s\": %s\n", RLT_NET_VAR, net.c[i].text, why);
			return -1;
		}
	}
	for (unsigned i = 0; print && i < net.n; i++) {
		char canon[1200];
		rlt__net_format(&net.c[i], canon, sizeof canon);
		printf("%s: %s\n", RLT_NET_VAR, canon);
	}
	printed += (int)net.n;
	if (print && !printed && !bad)
		printf("no rules: RLT_CONNECT, RLT_ACCEPT, RLT_SEND, RLT_RECV, RLT_CONNS and RLT_NET "
		       "are unset (a command would run unthrottled)\n");
	return print && bad ? -1 : 0;
}
