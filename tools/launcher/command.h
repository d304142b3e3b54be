/*
 * command.h: one budget for the command and all its processes (command.c; --per-process
 * skips it).
 */
#ifndef RLT_CLI_COMMAND_H
#define RLT_CLI_COMMAND_H

/* The command with one budget for all its processes (command.c): the command's segment made,
 * RLT_COMMAND_SCOPE set, the command run (seccomp: rlt_cli_trap_run; else exec_preloaded in a
 * child) and waited for, its RLT_STATS line written, its segments removed. Returns the
 * launcher's exit status. */
int rlt_cli_command_run(char **cmd, int seccomp, void (*exec_preloaded)(char **cmd));

#endif
