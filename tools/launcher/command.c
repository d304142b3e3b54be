/*
 * command.c: one budget for the whole command (rlthrottle(1) DESCRIPTION, src/scope_command.h).
 * The launcher names the command cmd-PID-START (its own pid and start time: unique until the
 * next boot, and `shm list` can tell whether the launcher still runs), makes the command's
 * segment, hands the name down in RLT_COMMAND_SCOPE, runs the command and waits for it, then
 * writes the command's RLT_STATS line and removes every segment of the command. Killed itself
 * (SIGKILL), it leaves them: `rlthrottle shm list` shows them as a command whose launcher is
 * gone, `rlthrottle shm rm cmd-PID-START` removes them all.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "command.h"
#include "keytab.h"
#include "launcher.h"
#include "proc_stat.h"
#include "scope_command.h"
#include "scope_shm.h"
#include "settings.h"
#include "stats.h"
#include "trap_run.h"

/* The command's pid while the launcher waits for it (the signal handler forwards to it). */
static volatile sig_atomic_t child;

/* SIGTERM and SIGHUP, and SIGINT and SIGQUIT sent by kill (the terminal sends those to the
 * command itself), go on to the command: the launcher ends when it does, and cleans up. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (child > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE ||
	                  (sig != SIGINT && sig != SIGQUIT)))
		kill((pid_t)child, sig);
}

/* Runs the command preloaded (exec_preloaded in the child) and waits for it. */
static int run_preloaded(char **cmd, void (*exec_preloaded)(char **cmd))
{
	static const int sigs[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};
	struct sigaction sa, old[4];
	sigset_t block, prev;
	pid_t pid;
	int st = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&block);
	for (int i = 0; i < 4; i++)
		sigaddset(&block, sigs[i]);
	/* blocked across the fork: a signal before the pid is known is forwarded after */
	sigprocmask(SIG_BLOCK, &block, &prev);
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 4; i++)
			sigaction(sigs[i], &old[i], NULL);
		sigprocmask(SIG_SETMASK, &prev, NULL);
		exec_preloaded(cmd);
		_exit(RLT_EXIT_OWN);
	}
	if (pid < 0) {
		fprintf(stderr, "rlthrottle: cannot fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &prev, NULL);
		return RLT_EXIT_OWN;
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	child = 0;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* The rules of the environment as every process of the command reads them (a bad one left
 * out under RLT_ON_ERROR=ignore, as they do): only their texts go into the command's slots. */
static void read_rules(struct rlt__ruleset *rs)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++) {
		const char *value = getenv(rlt_var_name((enum rlt_var)v)), *p = value;
		char one[RLT_VALUE_MAX + 1];
		struct rlt_rule r;
		struct rlt_error err;
		size_t n;

		if (!value)
			continue;
		while (rs->n[v] < RLT_MAX_RULES_PER_VAR && rlt__rule_next(&p, one))
			if (rlt_rules_parse((enum rlt_var)v, one, &r, 1, &n, &err) == 0 && n == 1)
				memcpy(rs->rules[v][rs->n[v]++].rule.text, r.text, sizeof r.text);
	}
}

/* A keyed rule of the command's keeps its table of keys in its segment: the summary's busiest
 * keys are the command's, read from there. */
static void attach_keys(const char *name, struct rlt__rt_rule *r, unsigned i)
{
	struct rlt__shm_holder *holders;
	_Atomic uint32_t *open;
	struct rlt_rule rule;
	struct rlt_error err;
	void *state;
	size_t n;

	if (rlt_rules_parse(r->rule.var, r->rule.text, &rule, 1, &n, &err) != 0 || n != 1 ||
	    rule.key == RLT_KEY_NONE || rule.var == RLT_VAR_CONNS || !rlt__cmd_rule(name, &rule, i) ||
	    rlt__shm_attach(&rule, &state, &open, &holders, &err) != 0)
		return;
	r->rule = rule;
	r->keytab = rlt__keytab_attach(state, &rule.params, rule.keys, 1);
}

/* The command's RLT_STATS line: the sums of its processes, as one. */
static void write_stats(const char *name, struct rlt__cmd_seg *seg, const char *tmpl,
                        rlt_ns_t elapsed)
{
	static struct rlt__ruleset rs; /* texts and counters only */
	struct rlt_error err;

	rlt__cmd_ruleset(seg, &rs);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs.n[v]; i++)
			attach_keys(name, &rs.rules[v][i], i);
	if (rlt__stats_to(tmpl, &rs, write, close, getpid(), elapsed, &err) != 0)
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
}

int rlt_cli_command_run(char **cmd, int seccomp, void (*exec_preloaded)(char **cmd))
{
	static struct rlt__ruleset rules; /* texts only */
	struct rlt__proc_stat me = {0};
	struct rlt__settings set;
	struct rlt__cmd_seg *seg;
	struct rlt_error err;
	char name[RLT_CMD_NAME_MAX + 1];
	rlt_ns_t start = rlt__now();
	int status;

	/* checked already (rlt_cli_check_rules): read again for RLT_STATS */
	if (rlt__settings_read(&set, &err) != 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		return RLT_EXIT_OWN;
	}
	rlt__proc_stat(getpid(), &me);
	snprintf(name, sizeof name, "cmd-%d-%llu", (int)getpid(), (unsigned long long)me.start);
	read_rules(&rules);
	seg = rlt__cmd_create(name, &rules, getpid(), me.start, &err);
	if (!seg) {
		fprintf(stderr, "rlthrottle: %s (--per-process runs without one)\n", err.msg);
		return RLT_EXIT_OWN;
	}
	if (setenv(RLT_CMD_ENV, name, 1) != 0) {
		rlt__cmd_remove(name);
		fprintf(stderr, "rlthrottle: cannot set the environment\n");
		return RLT_EXIT_OWN;
	}
	status = seccomp ? rlt_cli_trap_run(cmd) : run_preloaded(cmd, exec_preloaded);
	if (set.stats[0])
		write_stats(name, seg, set.stats, rlt__now() - start);
	munmap(seg, sizeof *seg);
	rlt__cmd_remove(name);
	return status;
}
