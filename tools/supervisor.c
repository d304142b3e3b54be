/* supervisor.c: --seccomp. Being written (issue: the launcher's seccomp supervisor). */
#include <stdio.h>

#include "launcher.h"

int rlt__supervise(char **cmd)
{
	(void)cmd;
	fprintf(stderr, "rlthrottle: --seccomp is not built yet; nothing was run\n");
	return RLT_EXIT_OWN;
}
