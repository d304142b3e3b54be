/*
 * top.h: `rlthrottle top` (top.c): the live view of throttled processes.
 */
#ifndef RLT_CLI_TOP_H
#define RLT_CLI_TOP_H

/* `rlthrottle top` (rlthrottle(1) COMMANDS): argv[0] is "top". Returns the launcher's exit
 * status. */
int rlt_cli_top(int argc, char **argv);

#endif
