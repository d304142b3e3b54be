/*
 * scope_command.h: one budget for the whole command (rlthrottle(1) DESCRIPTION). The launcher
 * names the command (RLT_COMMAND_SCOPE=NAME in its environment) and makes the command's
 * segment /dev/shm/rlthrottle.NAME before the command starts; every rule of every process of
 * the command that names no scope= then lives in a shared segment of its own,
 * rlthrottle.NAME.VAR.INDEX.HASH (scope_shm.c), so that all the processes charge one budget.
 * The command's segment holds the sums of the processes' statistics, added by each as it ends,
 * which the launcher writes as the command's one RLT_STATS line; when the command ends the
 * launcher removes NAME and every NAME.* segment.
 */
#ifndef RLT_SCOPE_COMMAND_H
#define RLT_SCOPE_COMMAND_H

#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

#define RLT_CMD_ENV "RLT_COMMAND_SCOPE"
#define RLT_CMD_NAME_MAX 64                   /* the NAME; its rules' names add at most 24 */
#define RLT_CMD_MAGIC 0x31444d432d544c52ull  /* "RLT-CMD1" little-endian */
#define RLT_CMD_LAYOUT 1u

/* One rule of the command, as the launcher read it, and what its processes counted. */
struct rlt__cmd_slot {
	uint32_t used;                     /* 1: text is a rule of the launcher's environment */
	uint32_t pad;
	char text[RLT_RULE_TEXT_MAX + 1];  /* the rule as written (struct rlt_rule's text) */
	struct rlt__stats sum;             /* the counters of the processes that ended */
};

/* The command's segment. Written by the launcher before the command starts; after that only
 * the sums and `processes` change. */
struct rlt__cmd_seg {
	uint64_t magic;            /* RLT_CMD_MAGIC */
	uint32_t layout;           /* RLT_CMD_LAYOUT */
	int32_t launcher;          /* pid of the launcher */
	uint64_t launcher_start;   /* its start time (field 22 of /proc/PID/stat) */
	uint64_t size;             /* bytes of the segment */
	_Atomic uint32_t processes; /* processes whose counters were added */
	uint32_t pad;
	struct rlt__cmd_slot slot[RLT_VAR_COUNT][RLT_MAX_RULES_PER_VAR];
};

/* 1 when NAME may name a command: [A-Za-z0-9_-], 1 to RLT_CMD_NAME_MAX bytes. */
int rlt__cmd_name_ok(const char *name);

/*
 * A rule that names no scope= (and is not an RLT_CONNS rule with key=, which a shared segment
 * cannot hold yet) becomes scope=shared:NAME.VAR.INDEX.HASH: INDEX is its place in its
 * variable, HASH that of its canonical form, so that a process of the command whose variable
 * says something else has budgets of its own instead of being refused. Returns 1 when the rule
 * changed, 0 when it keeps its scope.
 */
int rlt__cmd_rule(const char *name, struct rlt_rule *r, unsigned index);

/* 1 when the command's segment is there and ours (the launcher still runs the command), so
 * that a process its rules would share with exists; 0 when not. */
int rlt__cmd_alive(const char *name);

/*
 * The launcher's side: creates the command's segment (0600, O_EXCL) with the rules of rs as
 * its slots, launcher and start filled in. Returns the mapping, or NULL with err.
 */
struct rlt__cmd_seg *rlt__cmd_create(const char *name, const struct rlt__ruleset *rs,
                                     pid_t launcher, uint64_t start, struct rlt_error *err);

/*
 * A process's side, as it ends: adds the counters of rs into the command's segment when every
 * rule of rs is one of the command's (the same variable and text). 0 when added (the process
 * writes no line of its own); -1 when not (no segment: the command ended; a rule of its own).
 * Async-signal-safe (raw calls, no allocation).
 */
int rlt__cmd_add(const char *name, const struct rlt__ruleset *rs);

/*
 * Points every rule of out (zeroed by the caller) at the sums of seg: out holds the
 * command's rules with their texts and their counters, for rlt__stats_write. Only text and st
 * are set: nothing in out is a budget.
 */
void rlt__cmd_ruleset(struct rlt__cmd_seg *seg, struct rlt__ruleset *out);

/* Removes the command's segment and every NAME.* segment. Returns how many were removed. */
int rlt__cmd_remove(const char *name);

/* 1 when a segment name is the command's own one (cmd-PID-START), filling pid and start. */
int rlt__cmd_parse(const char *name, pid_t *pid, uint64_t *start);

#endif
