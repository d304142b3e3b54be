/* launcher.h: what the parts of the rlthrottle command share. */
#ifndef RLT_LAUNCHER_H
#define RLT_LAUNCHER_H

#include <sys/types.h>

/* Exit statuses of the launcher's own failures, as env(1) and timeout(1) have them. */
#define RLT_EXIT_OWN 125
#define RLT_EXIT_CANNOT_RUN 126
#define RLT_EXIT_NOTFOUND 127

/* `rlthrottle shm list` and `rlthrottle shm rm NAME...` (shm_cmd.c). argv[0] is "shm". Returns
 * the launcher's exit status (0, 1 when a NAME could not be removed, 2 for a usage error). */
int rlt_cli_shm_cmd(int argc, char **argv);

/*
 * Checks the settings and every variable as the library (or the handler of --seccomp) will at
 * load (check.c); print: --check, the rules as understood on stdout. seccomp: 1 for --seccomp
 * (the rules the system-call front takes), 0 for the preload.
 * 0, or -1 with one line on stderr.
 */
int rlt_cli_check_rules(int print, int seccomp);

/* `rlthrottle set PID VAR[#N] RULE` and `rlthrottle set shared:NAME RULE` (set_cmd.c). argv[0]
 * is "set". Returns the exit status: 0 applied or pending, 2 nothing changed. */
int rlt_cli_set_cmd(int argc, char **argv);

/* A PID as given: digits only, 1 .. 2^31-1 (stats_cmd.c). 0, or -1. */
int rlt_cli_parse_pid(const char *s, pid_t *pid);

/* 1 when cmd (looked up in PATH as execvp does) is an ELF with no program interpreter: a
 * static binary, which a preload cannot reach; 0 for anything else (a dynamic binary, a
 * script, a file not found: exec reports those). (elf_kind.c) */
int rlt_cli_is_static(const char *cmd);

/* `rlthrottle --seccomp`: the command with the system-call front injected into it; returns
 * the launcher's exit status (trap_run.c). */
int rlt_cli_trap_run(char **cmd);

/* The command with one budget for all its processes (command.c): the command's segment made,
 * RLT_COMMAND_SCOPE set, the command run (seccomp: rlt_cli_trap_run; else exec_preloaded in a
 * child) and waited for, its RLT_STATS line written, its segments removed. Returns the
 * launcher's exit status. */
int rlt_cli_command_run(char **cmd, int seccomp, void (*exec_preloaded)(char **cmd));

#endif
