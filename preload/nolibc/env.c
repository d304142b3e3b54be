/*
 * env.c: environ and getenv, on the environment the loader hands rlt_trap_libc_init (a copy of the
 * program's: the program's own environ is its C library's, or its runtime's).
 */
#include <stdlib.h>
#include <string.h>

#include "start.h"

char **environ;

char *getenv(const char *name)
{
	size_t n = strlen(name);

	if (!environ || !n || strchr(name, '='))
		return NULL;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

void rlt_trap_env_init(char **env)
{
	environ = env;
}
