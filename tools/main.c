/*
 * main.c: the rlthrottle launcher. Turns options into the RLT_* variables, checks them with the
 * same parser the library uses, and executes the command with librlthrottle.so preloaded (or,
 * with --seccomp, under the seccomp supervisor). Exit status: the command's; 125 for our own
 * errors, 126 when the command cannot be executed, 127 when it is not found (as env(1)).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"
#include "rlthrottle.h"
#include "scope_redis.h"
#include "shm_cmd.h"

#ifndef RLT_LIBDIR
#define RLT_LIBDIR "/usr/local/lib"
#endif

static void usage(FILE *f)
{
	fputs("usage: rlthrottle [OPTIONS] -- COMMAND [ARGS...]\n"
	      "Runs COMMAND with its network calls rate-limited.\n"
	      "\n"
	      "  -c, --connect RULE   limit connect() attempts            (RLT_CONNECT)\n"
	      "  -a, --accept RULE    limit accepted connections          (RLT_ACCEPT)\n"
	      "  -u, --send RULE      limit data sent (upload)            (RLT_SEND)\n"
	      "  -d, --recv RULE      limit data received (download)      (RLT_RECV)\n"
	      "  -n, --conns N        limit connections open at once      (RLT_CONNS)\n"
	      "      --stats PATH     write a JSON summary at exit        (RLT_STATS)\n"
	      "      --seccomp        throttle through a seccomp supervisor (static and\n"
	      "                       raw-syscall programs: Go, busybox-static)\n"
	      "      --check          print the rules as understood and exit (0 valid, 2 not)\n"
	      "  -h, --help           this text\n"
	      "  -V, --version        the version\n"
	      "\n"
	      "A RULE is RATE [key=value ...], e.g. \"1MiB/s\", \"20/s action=reject\",\n"
	      "\"100msg/s algo=leaky\"; repeat an option (or use ';') for several rules.\n"
	      "Rules already in the environment are kept; an option adds to them.\n"
	      "See rlthrottle(1) and rlthrottle(7).\n",
	      f);
}

static void die(const char *msg)
{
	fprintf(stderr, "rlthrottle: %s\n", msg);
	exit(RLT_EXIT_OWN);
}

/* An option adds a rule to what the variable already holds. */
static void add_rule(enum rlt_var v, const char *rule)
{
	const char *name = rlt_var_name(v), *old = getenv(name);
	char *joined;

	if (!old || !*old || v == RLT_VAR_CONNS) {
		if (setenv(name, rule, 1) != 0)
			die("cannot set the environment");
		return;
	}
	if (asprintf(&joined, "%s; %s", old, rule) < 0)
		die("out of memory");
	if (setenv(name, joined, 1) != 0)
		die("cannot set the environment");
	free(joined);
}

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

/* Parses every variable as the library will. Returns 0, or prints the error and returns -1. */
static int check_rules(int print)
{
	static struct rlt_rule rules[RLT_MAX_RULES_PER_VAR];
	struct rlt_error err;
	size_t n;

	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		const char *name = rlt_var_name((enum rlt_var)v), *val = getenv(name);
		if (!val || val[strspn(val, " \t")] == '\0')
			continue;
		if (rlt_rules_parse((enum rlt_var)v, val, rules, RLT_MAX_RULES_PER_VAR, &n, &err)) {
			fprintf(stderr, "rlthrottle: %s\n", err.msg);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			char canon[1024];
			const char *why = rlt__rule_unsupported(&rules[i]);
			if (why) {
				fprintf(stderr, "rlthrottle: %s=\"%s\": %s\n", name,
				        rules[i].text, why);
				return -1;
			}
			rlt_rule_format(&rules[i], canon, sizeof canon);
			if (print && rules[i].scope == RLT_SCOPE_REDIS)
				printf("%s: %s  # %s\n", name, canon, redis_status(&rules[i]));
			else if (print)
				printf("%s: %s\n", name, canon);
		}
	}
	return 0;
}

static int readable_at(char *out, size_t len, const char *dir, const char *rest)
{
	int n = snprintf(out, len, "%s%s", dir, rest);
	return n > 0 && (size_t)n < len && access(out, R_OK) == 0;
}

/* librlthrottle.so beside the launcher (build tree), in ../lib (an install), or in RLT_LIBDIR. */
static int find_library(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (readable_at(out, len, self, "/librlthrottle.so") ||
			    readable_at(out, len, self, "/../lib/librlthrottle.so"))
				return 0;
		}
	}
	return readable_at(out, len, RLT_LIBDIR, "/librlthrottle.so") ? 0 : -1;
}

static void preload_and_exec(char **cmd)
{
	char lib[PATH_MAX], *joined = NULL;
	const char *old = getenv("LD_PRELOAD");

	if (find_library(lib, sizeof lib) != 0)
		die("cannot find librlthrottle.so beside the launcher, in ../lib or in " RLT_LIBDIR);
	if (old && *old) {
		if (asprintf(&joined, "%s:%s", lib, old) < 0)
			die("out of memory");
	}
	if (setenv("LD_PRELOAD", joined ? joined : lib, 1) != 0)
		die("cannot set the environment");
	free(joined);
	execvp(cmd[0], cmd);
	fprintf(stderr, "rlthrottle: cannot run %s: %s\n", cmd[0], strerror(errno));
	exit(errno == ENOENT ? RLT_EXIT_NOTFOUND : RLT_EXIT_CANNOT_RUN);
}

int main(int argc, char **argv)
{
	enum { OPT_STATS = 256, OPT_SECCOMP, OPT_CHECK };
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"accept", required_argument, NULL, 'a'},
		{"send", required_argument, NULL, 'u'},
		{"recv", required_argument, NULL, 'd'},
		{"conns", required_argument, NULL, 'n'},
		{"stats", required_argument, NULL, OPT_STATS},
		{"seccomp", no_argument, NULL, OPT_SECCOMP},
		{"check", no_argument, NULL, OPT_CHECK},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int seccomp = 0, check = 0, c;

	/* subcommands, before option parsing */
	if (argc > 1 && !strcmp(argv[1], "shm"))
		return rlt__shm_cmd(argc - 1, argv + 1);
	/* "+": stop at the first non-option, so the command's own options stay its own */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:a:u:d:n:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': add_rule(RLT_VAR_CONNECT, optarg); break;
		case 'a': add_rule(RLT_VAR_ACCEPT, optarg); break;
		case 'u': add_rule(RLT_VAR_SEND, optarg); break;
		case 'd': add_rule(RLT_VAR_RECV, optarg); break;
		case 'n': add_rule(RLT_VAR_CONNS, optarg); break;
		case OPT_STATS:
			if (!*optarg)
				die("--stats needs a path (or stderr)");
			setenv("RLT_STATS", optarg, 1);
			break;
		case OPT_SECCOMP: seccomp = 1; break;
		case OPT_CHECK: check = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("rlthrottle %s\n", RLT_VERSION); return 0;
		case ':':
		case '?':
		default: {
			char msg[128];
			if (optopt && optopt < 256)
				snprintf(msg, sizeof msg, "option -%c %s (see --help)", optopt,
				         c == ':' ? "needs a value" : "is unknown");
			else
				snprintf(msg, sizeof msg, "option %s is unknown or needs a value (see --help)",
				         argv[optind - 1]);
			die(msg);
		}
		}
	}
	if (check)
		return check_rules(1) == 0 ? 0 : 2;
	if (optind >= argc)
		die("no command to run (see --help)");
	if (check_rules(0) != 0)
		return RLT_EXIT_OWN;
	if (seccomp)
		return rlt__supervise(argv + optind);
	preload_and_exec(argv + optind);
	return RLT_EXIT_OWN;
}
