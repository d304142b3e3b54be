/*
 * ruleset_env.c: the rules of a process from its environment, with the lines that go with them,
 * for the preload and the --seccomp handler (at load) alike.
 */
#include <stdlib.h>
#include <string.h>

#include "ruleset_env.h"
#include "scope_command.h"
#include "scope_redis.h"

/* A function pointer does not go through void * in C11: the warn callback's context holds it. */
struct sink {
	rlt__log_fn log;
};

static void warn_rule(const char *msg, void *ctx)
{
	const struct sink *s = ctx;
	s->log(RLT_LOG_WARN, "%s (rule ignored: RLT_ON_ERROR=ignore)", msg);
}

int rlt__ruleset_from_env(struct rlt__ruleset *rs, const struct rlt__settings *set,
                          rlt__log_fn log, struct rlt_error *err)
{
	const char *values[RLT_VAR_COUNT];
	struct sink sink = {log};

	rs->stats_on = set->stats[0] != 0;
	/* A process of a command the launcher still runs shares its budgets; one that starts
	 * after the command ended (a daemon's late child) has its own, rather than make
	 * segments nobody will remove. */
	if (set->command[0] && rlt__cmd_alive(set->command))
		strcpy(rs->command, set->command);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		values[v] = getenv(rlt_var_name((enum rlt_var)v));
	/* before the build: a redis rule may reach its server while it is set up */
	rlt__scope_log = log;
	return rlt__ruleset_build(rs, values, set->ignore_bad, warn_rule, &sink, err) != 0 ? -1 : 0;
}

void rlt__ruleset_log(const struct rlt__ruleset *rs, rlt__log_fn log, const char *tail)
{
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rs->n[v]; i++) {
			char canon[1024];
			rlt_rule_format(&rs->rules[v][i].rule, canon, sizeof canon);
			log(RLT_LOG_INFO, "%s: %s%s", rlt_var_name((enum rlt_var)v), canon, tail);
		}
}
