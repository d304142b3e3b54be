/* supervisor.h: the seccomp supervisor (--seccomp) as the launcher sees it. Its own files share
 * internal.h. */
#ifndef RLT_SUP_SUPERVISOR_H
#define RLT_SUP_SUPERVISOR_H

/* Exit statuses of the launcher's own failures, as env(1) and timeout(1) have them. */
#define RLT_EXIT_OWN 125
#define RLT_EXIT_CANNOT_RUN 126
#define RLT_EXIT_NOTFOUND 127

/* Why --seccomp refuses RLT_INHERIT=0 (said by --check and by the run alike). */
#define RLT_SECCOMP_NO_INHERIT \
	"RLT_INHERIT=0 cannot be honoured with --seccomp (a seccomp filter stays with every " \
	"program the command executes)"

/* --seccomp: runs cmd under the seccomp supervisor, with the rules of the RLT_* variables.
 * Returns the exit status the launcher should exit with (the command's, or 125 with one line
 * on stderr when the supervisor cannot work: it never runs the command unthrottled). */
int rlt_sup_run(char **cmd);

#endif
