/*
 * check.h: `rlthrottle --check` (check.c): the settings and every variable checked as the
 * library, or the handler of --seccomp, will check them at load.
 */
#ifndef RLT_CLI_CHECK_H
#define RLT_CLI_CHECK_H

/*
 * Checks the settings and every variable as the library (or the handler of --seccomp) will at
 * load (check.c); print: --check, the rules as understood on stdout. seccomp: 1 for --seccomp
 * (the rules the system-call front takes), 0 for the preload.
 * 0, or -1 with one line on stderr.
 */
int rlt_cli_check_rules(int print, int seccomp);

#endif
