/*
 * set_cmd.c: `rlthrottle set PID VAR[#N] RULE` and `rlthrottle set shared:NAME RULE` (rlthrottle(1) COMMANDS):
 * a rule of a running process, or of a shared scope, gets a new rate, burst, action or
 * max-wait. The RULE is checked here first, with the same one-line error as at start, so that a
 * bad one never reaches the process; the process (or the segment's check) refuses what is a
 * different rule rather than a new rate. Exit status: 0 applied (or posted to a process that
 * makes no throttled call now: it applies it at its next one), 2 nothing changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "clock.h"
#include "net.h"
#include "publish.h"
#include "publish_read.h"
#include "rule_set.h"
#include "set_cmd.h"
#include "shm_set.h"
#include "stats_cmd.h"

/* How long `set` waits for a busy process to answer (it answers at its next throttled call,
 * or within a wait slice when a thread waits). */
#define ANSWER_WAIT_NS (1000 * 1000 * 1000ull)

static const char usage_text[] =
	"usage: rlthrottle set PID VAR[#N] RULE | rlthrottle set PID RLT_NET CONDITIONS |\n"
	"       rlthrottle set shared:NAME RULE\n"
	"Gives a rule of a running throttled process (or of a shared scope) a new rate,\n"
	"burst, action, max-wait or errno, without a restart. VAR names the variable as\n"
	"the launcher does: RLT_RECV, recv, download, -d or --recv (and so for connect -c,\n"
	"accept -a, send/upload -u, conns -n); #N picks its Nth rule, from 1.\n"
	"RLT_NET (or net, --net) replaces the network conditions whole (\"\" clears them).\n";

/* Posts the request in the page opened for writing (rd), closes it, and says the answer:
 * 0, or 2 with the process's one line. */
static int post(struct rlt__pub_reader *rd, pid_t pid, enum rlt_var var, int index,
                const char *text)
{
	struct rlt_error err = {{0}};
	long rc = rlt__ctl_request(rlt__pub_reader_ctl(rd), var, index, text, ANSWER_WAIT_NS, &err);

	rlt__pub_close(rd);
	if (rc < 0) {
		fprintf(stderr, "rlthrottle: set: %ld: %s\n", (long)pid, err.msg);
		return 2;
	}
	printf("%ld: %s\n", (long)pid, err.msg);
	return 0;
}

static int usage_error(const char *why)
{
	fprintf(stderr, "rlthrottle: set: %s\n%s", why, usage_text);
	return 2;
}

/* The names a variable goes by: its own, the launcher's options, and what people say. */
static const struct {
	enum rlt_var var;
	const char *names[5];
} var_names[] = {
	{RLT_VAR_CONNECT, {"connect", "-c", "--connect", NULL}},
	{RLT_VAR_ACCEPT, {"accept", "-a", "--accept", NULL}},
	{RLT_VAR_SEND, {"send", "-u", "--send", "upload", NULL}},
	{RLT_VAR_RECV, {"recv", "-d", "--recv", "download", NULL}},
	{RLT_VAR_CONNS, {"conns", "-n", "--conns", NULL}},
};

/* Whether s[0..len) names v: RLT_RECV (any case), recv, -d, --recv, download. */
static int names_var(const char *s, size_t len, enum rlt_var v)
{
	const char *own = rlt_var_name(v);

	if (strlen(own) == len && strncasecmp(own, s, len) == 0)
		return 1;
	for (size_t i = 0; i < sizeof var_names / sizeof var_names[0]; i++)
		if (var_names[i].var == v)
			for (const char *const *n = var_names[i].names; *n; n++)
				if (strlen(*n) == len && strncasecmp(*n, s, len) == 0)
					return 1;
	return 0;
}

/* "RLT_SEND", "send", "-u" or "RLT_SEND#2" (N from 1): the variable and the rule's index (-1:
 * none given). */
static int parse_var(const char *s, enum rlt_var *var, int *index)
{
	const char *hash = strchr(s, '#');
	size_t len = hash ? (size_t)(hash - s) : strlen(s);

	*index = -1;
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		if (!names_var(s, len, (enum rlt_var)v))
			continue;
		*var = (enum rlt_var)v;
		if (!hash)
			return 0;
		char *end;
		long n = strtol(hash + 1, &end, 10);
		if (*end || end == hash + 1 || n < 1 || n > RLT_MAX_RULES_PER_VAR)
			return -1;
		*index = (int)n - 1;
		return 0;
	}
	return -1;
}

/* RLT_NET (any case), net, --net: the network conditions, replaced whole. */
static int names_net(const char *s)
{
	return !strcasecmp(s, RLT_NET_VAR) || !strcmp(s, "net") || !strcmp(s, "--net");
}

/* `set PID RLT_NET TEXT`: checked here first (nothing reaches the process if it is bad), then
 * posted as the rules' sets are; the process applies it at its next network call. */
static int set_net(pid_t pid, const char *text)
{
	static struct rlt__net_set net;
	struct rlt__pub_reader rd;
	struct rlt_error err;
	int rc;

	if (rlt__net_parse(text, &net, &err) != 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		return 2;
	}
	for (unsigned i = 0; i < net.n; i++)
		if (rlt__net_unsupported(&net.c[i])) {
			fprintf(stderr, "rlthrottle: %s=\"%.200s\": %s\n", RLT_NET_VAR, net.c[i].text,
			        rlt__net_unsupported(&net.c[i]));
			return 2;
		}
	if (strlen(text) > RLT_RULE_TEXT_MAX) {
		fprintf(stderr, "rlthrottle: set: %s: at most %d bytes at once\n", RLT_NET_VAR,
		        RLT_RULE_TEXT_MAX);
		return 2;
	}
	rc = rlt__pub_open(pid, 1, &rd, &err);
	if (rc != 0) {
		fprintf(stderr, "rlthrottle: set: %s\n", err.msg);
		return 2;
	}
	return post(&rd, pid, (enum rlt_var)RLT_CTL_VAR_NET, -1, text);
}

static int set_process(const char *pid_s, const char *var_s, const char *text)
{
	struct rlt_rule parsed;
	struct rlt__pub_reader rd;
	struct rlt_error err;
	enum rlt_var var;
	pid_t pid;
	int index, rc;

	if (rlt_cli_parse_pid(pid_s, &pid) != 0)
		return usage_error("PID must be a process id or shared:NAME");
	if (names_net(var_s))
		return set_net(pid, text);
	if (parse_var(var_s, &var, &index) != 0) {
		fprintf(stderr,
		        "rlthrottle: set: \"%s\": VAR is one of RLT_CONNECT, RLT_ACCEPT, RLT_SEND, "
		        "RLT_RECV, RLT_CONNS (or connect, accept, send, recv, conns, or the "
		        "launcher's -c, -a, -u, -d, -n), optionally with #N (the Nth rule, from 1)\n",
		        var_s);
		return 2;
	}
	if (rlt__rule_parse_one(var, text, NULL, &parsed, &err) != 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		return 2;
	}
	rc = rlt__pub_open(pid, 1, &rd, &err);
	if (rc != 0) {
		fprintf(stderr, "rlthrottle: set: %s\n", err.msg);
		return 2;
	}
	return post(&rd, pid, var, index, text);
}

int rlt_cli_set_cmd(int argc, char **argv)
{
	struct rlt_error err;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc == 3 && !strncmp(argv[1], "shared:", 7)) {
		if (rlt__shm_set(argv[1] + 7, argv[2], rlt__now(), &err) != 0) {
			fprintf(stderr, "rlthrottle: set: %s\n", err.msg);
			return 2;
		}
		printf("%s\n", err.msg);
		return 0;
	}
	if (argc == 4)
		return set_process(argv[1], argv[2], argv[3]);
	return usage_error(argc > 1 && !strncmp(argv[1], "shared:", 7)
	                           ? "shared:NAME takes one RULE"
	                           : "expected PID VAR RULE or shared:NAME RULE");
}
