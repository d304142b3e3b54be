/*
 * set_cmd.h: `rlthrottle set` (set_cmd.c): a rule, or RLT_NET, changed in a running process or
 * in a shared segment.
 */
#ifndef RLT_CLI_SET_CMD_H
#define RLT_CLI_SET_CMD_H

/* `rlthrottle set PID VAR[#N] RULE` and `rlthrottle set shared:NAME RULE` (set_cmd.c). argv[0]
 * is "set". Returns the exit status: 0 applied or pending, 2 nothing changed. */
int rlt_cli_set_cmd(int argc, char **argv);

#endif
