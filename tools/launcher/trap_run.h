/*
 * trap_run.h: `rlthrottle --seccomp` (trap_run.c): the band, the filter, the block and the
 * injector around the command; the exit status.
 */
#ifndef RLT_CLI_TRAP_RUN_H
#define RLT_CLI_TRAP_RUN_H

/* `rlthrottle --seccomp`: the command with the system-call front injected into it; returns
 * the launcher's exit status (trap_run.c). */
int rlt_cli_trap_run(char **cmd);

#endif
