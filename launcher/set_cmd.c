/*
 * set_cmd.c: `rlthrottle set PID VAR[#N] RULE` and `rlthrottle set shared:NAME RULE` (SPEC §7):
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

#include "clock.h"
#include "launcher.h"
#include "publish.h"
#include "rule_set.h"

/* How long `set` waits for a busy process to answer (it answers at its next throttled call,
 * or within a wait slice when a thread waits). */
#define ANSWER_WAIT_NS (1000 * 1000 * 1000ull)

static int usage_error(const char *why)
{
	fprintf(stderr,
	        "rlthrottle: set: %s\n"
	        "usage: rlthrottle set PID VAR[#N] RULE | rlthrottle set shared:NAME RULE\n",
	        why);
	return 2;
}

/* "RLT_SEND" or "RLT_SEND#2" (N from 1): the variable and the rule's index (-1: none given). */
static int parse_var(const char *s, enum rlt_var *var, int *index)
{
	const char *hash = strchr(s, '#');
	size_t len = hash ? (size_t)(hash - s) : strlen(s);

	*index = -1;
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		const char *name = rlt_var_name((enum rlt_var)v);
		if (strlen(name) != len || strncmp(name, s, len) != 0)
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
	if (parse_var(var_s, &var, &index) != 0) {
		fprintf(stderr,
		        "rlthrottle: set: \"%s\": VAR is one of RLT_CONNECT, RLT_ACCEPT, RLT_SEND, "
		        "RLT_RECV, RLT_CONNS, optionally with #N (the Nth rule, from 1)\n",
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
	/* Not NULL: the page was opened for writing. */
	rc = rlt__ctl_request(rlt__pub_reader_ctl(&rd), var, index, text, ANSWER_WAIT_NS, &err);
	rlt__pub_close(&rd);
	if (rc < 0) {
		fprintf(stderr, "rlthrottle: set: %ld: %s\n", (long)pid, err.msg);
		return 2;
	}
	printf("%ld: %s\n", (long)pid, err.msg);
	return 0;
}

int rlt_cli_set_cmd(int argc, char **argv)
{
	struct rlt_error err;

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
