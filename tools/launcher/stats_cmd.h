/*
 * stats_cmd.h: `rlthrottle stats` (stats_cmd.c), and the reading of a PID the other
 * subcommands share.
 */
#ifndef RLT_CLI_STATS_CMD_H
#define RLT_CLI_STATS_CMD_H

#include <sys/types.h>

/* A PID as given: digits only, 1 .. 2^31-1 (stats_cmd.c). 0, or -1. */
int rlt_cli_parse_pid(const char *s, pid_t *pid);

/* `rlthrottle stats` (rlthrottle(1) COMMANDS): argv[0] is "stats". Returns the launcher's exit
 * status. */
int rlt_cli_stats(int argc, char **argv);

#endif
