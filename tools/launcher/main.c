/*
 * main.c: the rlthrottle launcher. Turns options into the RLT_* variables, checks them with the
 * same parser the library uses (check.c), and executes the command with librlthrottle.so
 * preloaded (or, with --seccomp, with the system-call front injected). Exit status: the command's; 125
 * for our own errors, 126 when the command cannot be executed, 127 when it is not found (as
 * env(1)).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "command.h"
#include "elf_kind.h"
#include "launcher.h"
#include "policy.h"
#include "rlthrottle.h"
#include "set_cmd.h"
#include "shm_cmd.h"
#include "stats_cmd.h"
#include "top.h"
#include "trap_run.h"

/* Where `make install` puts librlthrottle.so (PKGLIBDIR): the Makefile always says. */
#ifndef RLT_LIBDIR
#error "RLT_LIBDIR: the directory of the installed librlthrottle.so (the Makefile sets it)"
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
	      "      --net COND       a network condition: latency, loss, reset, hang,\n"
	      "                       slice, connect (see rlthrottle(7))  (RLT_NET)\n"
	      "      --stats PATH     write a JSON summary at exit        (RLT_STATS)\n"
	      "                       (%p: the pid; stderr: to stderr)\n"
	      "      --log LEVEL      error, warn, info or debug          (RLT_LOG)\n"
	      "      --no-inherit     programs COMMAND executes are not throttled\n"
	      "                                                          (RLT_INHERIT=0)\n"
	      "      --no-publish     invisible to top, stats and set     (RLT_PUBLISH=0)\n"
	      "      --per-process    each process of COMMAND has budgets of its own (by\n"
	      "                       default the whole command shares each rule's budget,\n"
	      "                       RLT_COMMAND_SCOPE; --stats: one line for the command)\n"
	      "      --seccomp        throttle through the system-call front (static and\n"
	      "                       raw-syscall programs: Go, busybox-static; a static\n"
	      "                       COMMAND gets it without the option)\n"
	      "      --check          print the rules as understood and exit (0 valid, 2 not)\n"
	      "  -h, --help           this text\n"
	      "  -V, --version        the version\n"
	      "\n"
	      "       rlthrottle top [PID...] [--once] [--json]   watch running throttled programs\n"
	      "       rlthrottle stats [PID|all] [--format json|prometheus]   one snapshot\n"
	      "       rlthrottle set PID VAR[#N] RULE | set shared:NAME RULE   a new rate now\n"
	      "       rlthrottle shm list|rm NAME...   shared-scope segments\n"
	      "       rlthrottle help [COMMAND]        this text, or a subcommand's\n"
	      "\n"
	      "A RULE is RATE [key=value ...], e.g. \"1MiB/s\", \"20/s action=reject\",\n"
	      "\"100msg/s algo=leaky\"; repeat an option (or use ';') for several rules.\n"
	      "Rules already in the environment are kept; an option adds to them, and\n"
	      "RLT_ON_ERROR=ignore there leaves a bad rule out with a warning.\n"
	      "Exit status: COMMAND's; 125 for rlthrottle's own errors (126: COMMAND cannot\n"
	      "be run, 127: not found); --check and the subcommands: 2 for a usage error.\n"
	      "See rlthrottle(1) and rlthrottle(7).\n",
	      f);
}

/* --check is a subcommand: its usage errors exit 2, as the others' do (rlthrottle(1) OPTIONS); running a
 * command keeps 125 for ours. */
static int checking;

static void die(const char *msg)
{
	fprintf(stderr, "rlthrottle: %s\n", msg);
	exit(checking ? 2 : RLT_EXIT_OWN);
}

/*
 * trickle's -d 1024 (KB/s) and pv's -L 1M (bytes a second) are numbers without a period:
 * the parser refuses them, and here the error says what to write instead. The rate's first
 * word only; anything with a '/' goes to the parser.
 */
static void bare_rate(const char *opt, const char *rule)
{
	static const char *const bin[] = {"KiB", "MiB", "GiB", "TiB"}, *const bits[] = {
		"kbit", "Mbit", "Gbit", "Tbit"};
	static const char prefixes[] = "kmgt";
	size_t n = strspn(rule, "0123456789.");
	const char *suf = rule + n, *at;
	char msg[300];

	if (n == 0 || strchr(rule, '/') || rule[strcspn(rule, " \t;")] != '\0')
		return;
	if (*suf == '\0')
		snprintf(msg, sizeof msg,
		         "%s %s: a rate needs a unit and a period: %sKiB/s is trickle's %s %s "
		         "(KiB a second), %sB/s is bytes a second (see rlthrottle(7))",
		         opt, rule, rule, strcmp(opt, "--recv") ? "-u" : "-d", rule, rule);
	else if (suf[1] == '\0' && (at = strchr(prefixes, suf[0] | 0x20)) != NULL)
		snprintf(msg, sizeof msg,
		         "%s %s: a rate needs a unit and a period: %.*s%s/s (as pv -L %s), or "
		         "%.*s%s/s for bits (see rlthrottle(7))",
		         opt, rule, (int)n, rule, bin[at - prefixes], rule, (int)n, rule,
		         bits[at - prefixes]);
	else
		return;
	die(msg);
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

/* --net adds a condition to what RLT_NET already holds. */
static void add_net(const char *cond)
{
	const char *old = getenv("RLT_NET");
	char *joined;

	if (!old || !*old) {
		if (setenv("RLT_NET", cond, 1) != 0)
			die("cannot set the environment");
		return;
	}
	if (asprintf(&joined, "%s; %s", old, cond) < 0)
		die("out of memory");
	if (setenv("RLT_NET", joined, 1) != 0)
		die("cannot set the environment");
	free(joined);
}

static int readable_at(char *out, size_t len, const char *dir, const char *rest)
{
	int n = snprintf(out, len, "%s%s", dir, rest);
	return n > 0 && (size_t)n < len && access(out, R_OK) == 0;
}

/* librlthrottle.so beside the launcher (the build tree), or where the install put it
 * (RLT_LIBDIR). Nothing else: a guess such as ../lib would hide a launcher built for
 * another place. */
static int find_library(char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if (readable_at(out, len, self, "/librlthrottle.so"))
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
		die("cannot find librlthrottle.so beside the launcher nor in " RLT_LIBDIR);
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

/* A bad option: one line that names it and says what is wrong with it; status 125. */
static void bad_option(const char *arg, int c, int opt, const struct option *opts)
{
	char msg[200];

	if (arg && !strncmp(arg, "--", 2)) {
		size_t len = strcspn(arg + 2, "=");
		const struct option *o = NULL;
		int matches = 0;
		/* getopt_long takes a unique prefix of a name, as --sen for --send */
		for (const struct option *q = opts; q->name; q++)
			if (!strncmp(q->name, arg + 2, len)) {
				if (strlen(q->name) == len) {
					o = q;
					matches = 1;
					break;
				}
				o = q;
				matches++;
			}
		if (matches > 1)
			snprintf(msg, sizeof msg, "option --%.*s is ambiguous (see --help)", (int)len,
			         arg + 2);
		else if (!o)
			snprintf(msg, sizeof msg, "option --%.*s is unknown (see --help)", (int)len,
			         arg + 2);
		else if (o->has_arg == no_argument && arg[2 + len] == '=')
			snprintf(msg, sizeof msg, "option --%s takes no value (see --help)", o->name);
		else
			snprintf(msg, sizeof msg, "option --%s needs a value (see --help)", o->name);
	} else if (opt > 0 && opt < 256) {
		snprintf(msg, sizeof msg, "option -%c %s (see --help)", opt,
		         c == ':' ? "needs a value" : "is unknown");
	} else {
		snprintf(msg, sizeof msg, "option %.60s is unknown (see --help)", arg ? arg : "?");
	}
	die(msg);
}

/* `rlthrottle help [COMMAND]`: the usage of the launcher or of one subcommand, on stdout. */
static int help(int argc, char **argv)
{
	char *h[] = {NULL, "--help", NULL};

	if (argc == 1) {
		usage(stdout);
		return 0;
	}
	if (argc == 2) {
		h[0] = argv[1];
		if (!strcmp(argv[1], "top"))
			return rlt_cli_top(2, h);
		if (!strcmp(argv[1], "stats"))
			return rlt_cli_stats(2, h);
		if (!strcmp(argv[1], "set"))
			return rlt_cli_set_cmd(2, h);
		if (!strcmp(argv[1], "shm"))
			return rlt_cli_shm_cmd(2, h);
		if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--check") ||
		    !strcmp(argv[1], "check")) {
			usage(stdout);
			return 0;
		}
	}
	fprintf(stderr, "rlthrottle: help: %s: not a command (top, stats, set, shm, help)\n",
	        argc > 2 ? "one COMMAND at most" : argv[1]);
	return 2;
}

/* Whether --check is among the launcher's own arguments (before the command). */
static int asks_check(int argc, char **argv)
{
	for (int i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "--check"))
			return 1;
	}
	return 0;
}

/* The subcommands, before option parsing: 1 with *status the exit status of the one argv[1]
 * names, 0 when it names none. */
static int subcommand(int argc, char **argv, int *status)
{
	static const struct {
		const char *name;
		int (*run)(int argc, char **argv);
	} sub[] = {
		{"shm", rlt_cli_shm_cmd}, {"set", rlt_cli_set_cmd}, {"top", rlt_cli_top},
		{"stats", rlt_cli_stats}, {"help", help},
	};
	size_t i;

	for (i = 0; argc > 1 && i < sizeof sub / sizeof sub[0]; i++)
		if (!strcmp(argv[1], sub[i].name)) {
			*status = sub[i].run(argc - 1, argv + 1);
			return 1;
		}
	return 0;
}

/* --help and --version (only: 'h' or 'V', as given in only_arg) stand alone: anything beside
 * them is a mistake to report, not to drop silently. */
static int help_or_version(int only, const char *only_arg, int argc)
{
	if (argc != 2) {
		char msg[160];
		snprintf(msg, sizeof msg, "%.60s takes no other argument (see --help)", only_arg);
		die(msg);
	}
	if (only == 'h')
		usage(stdout);
	else
		printf("rlthrottle %s\n", RLT_VERSION);
	return 0;
}

/* Runs cmd under the front the options chose (a static cmd gets the system-call front) with
 * the rules checked; returns only when it could not be run, or with the command's status. */
static int run_command(char **cmd, int seccomp, int per_process)
{
	if (!seccomp && rlt_cli_is_static(cmd[0]) == 1) {
		/* a preload cannot reach it: never run it unthrottled without a word */
		const char *lv = getenv("RLT_LOG");
		if (lv && (!strcmp(lv, "info") || !strcmp(lv, "debug")))
			fprintf(stderr, "rlthrottle: %s is a static binary: throttled through the "
			                "system-call front (--seccomp)\n", cmd[0]);
		seccomp = 1;
	}
	if (rlt_cli_check_rules(0, seccomp) != 0)
		return RLT_EXIT_OWN;
	/* one budget for the command, unless each process is to have its own */
	if (!per_process)
		return rlt_cli_command_run(cmd, seccomp, preload_and_exec);
	unsetenv("RLT_COMMAND_SCOPE"); /* an outer launcher's command is not ours */
	if (seccomp)
		return rlt_cli_trap_run(cmd);
	preload_and_exec(cmd);
	return RLT_EXIT_OWN;
}

int main(int argc, char **argv)
{
	enum { OPT_STATS = 256, OPT_SECCOMP, OPT_CHECK, OPT_LOG, OPT_NO_INHERIT, OPT_NO_PUBLISH,
	       OPT_PER_PROCESS, OPT_NET };
	static const struct option opts[] = {
		{"connect", required_argument, NULL, 'c'},
		{"accept", required_argument, NULL, 'a'},
		{"send", required_argument, NULL, 'u'},
		{"recv", required_argument, NULL, 'd'},
		{"conns", required_argument, NULL, 'n'},
		{"net", required_argument, NULL, OPT_NET},
		{"stats", required_argument, NULL, OPT_STATS},
		{"log", required_argument, NULL, OPT_LOG},
		{"no-inherit", no_argument, NULL, OPT_NO_INHERIT},
		{"no-publish", no_argument, NULL, OPT_NO_PUBLISH},
		{"per-process", no_argument, NULL, OPT_PER_PROCESS},
		{"seccomp", no_argument, NULL, OPT_SECCOMP},
		{"check", no_argument, NULL, OPT_CHECK},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int seccomp = 0, check = 0, only = 0, per_process = 0, c;
	const char *only_arg = NULL;

	if (subcommand(argc, argv, &c))
		return c;
	checking = asks_check(argc, argv);
	/* "+": stop at the first non-option, so the command's own options stay its own */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:a:u:d:n:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': add_rule(RLT_VAR_CONNECT, optarg); break;
		case 'a': add_rule(RLT_VAR_ACCEPT, optarg); break;
		case 'u':
			bare_rate("--send", optarg);
			add_rule(RLT_VAR_SEND, optarg);
			break;
		case 'd':
			bare_rate("--recv", optarg);
			add_rule(RLT_VAR_RECV, optarg);
			break;
		case 'n': add_rule(RLT_VAR_CONNS, optarg); break;
		case OPT_NET: add_net(optarg); break;
		case OPT_STATS:
			if (!*optarg)
				die("--stats needs a path (or stderr)");
			if (!strcmp(optarg, "-"))
				die("--stats -: stdout is the command's own: write --stats stderr, or a "
				    "path");
			setenv("RLT_STATS", optarg, 1);
			break;
		case OPT_LOG: setenv("RLT_LOG", optarg, 1); break; /* checked with the rules */
		case OPT_NO_INHERIT: setenv("RLT_INHERIT", "0", 1); break;
		case OPT_NO_PUBLISH: setenv("RLT_PUBLISH", "0", 1); break;
		case OPT_PER_PROCESS: per_process = 1; break;
		case OPT_SECCOMP: seccomp = 1; break;
		case OPT_CHECK: check = 1; break;
		case 'h':
		case 'V':
			only = c;
			only_arg = argv[optind - 1];
			break;
		case ':':
		case '?':
		default:
			bad_option(argv[optind - 1], c, optopt, opts);
		}
	}
	if (only)
		return help_or_version(only, only_arg, argc);
	if (check)
		return rlt_cli_check_rules(1, seccomp) == 0 ? 0 : 2;
	if (optind >= argc)
		die("no command to run (see --help)");
	return run_command(argv + optind, seccomp, per_process);
}
