/*
 * trap_init.c: the blob's entry point, and the handlers atexit and pthread_atfork record
 * (nothing runs them by itself here: the SIGSYS entry does, at exit and in a fork's child).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>

#include "start.h"

#define MAX_HANDLERS 32
static void (*at_exit[MAX_HANDLERS])(void);
static unsigned n_exit;
static void (*at_child[MAX_HANDLERS])(void);
static unsigned n_child;

/* Load time only (the core's and init.c's registrations), before any thread of ours races. */
int atexit(void (*fn)(void))
{
	if (n_exit == MAX_HANDLERS)
		return -1;
	at_exit[n_exit++] = fn;
	return 0;
}

int pthread_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	/* the core and the preload register child handlers only */
	if (prepare || parent)
		return EINVAL;
	if (child) {
		if (n_child == MAX_HANDLERS)
			return ENOMEM;
		at_child[n_child++] = child;
	}
	return 0;
}

void rlt_trap_run_atexit(void)
{
	while (n_exit)
		at_exit[--n_exit]();
}

void rlt_trap_run_atfork_child(void)
{
	for (unsigned i = 0; i < n_child; i++)
		at_child[i]();
}

/* The linker's bounds of the constructors' table (the default script provides them). */
extern void (*__init_array_start[])(void) __attribute__((visibility("hidden")));
extern void (*__init_array_end[])(void) __attribute__((visibility("hidden")));

void rlt_trap_libc_init(const struct rlt_trap_libc_cfg *cfg)
{
	const void *vdso = NULL;

	rlt_trap_env_init(cfg ? cfg->environ : NULL);
	for (const unsigned long *a = cfg ? cfg->auxv : NULL; a && a[0] != AT_NULL; a += 2)
		if (a[0] == AT_SYSINFO_EHDR)
			vdso = (const void *)a[1];
	rlt_trap_clock_init(vdso);
	for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
		(*f)();
}

void rlt_trap_libc_start(void *sp)
{
	/* a new image's first stack: argc, argv[argc], NULL, envp..., NULL, auxv pairs */
	long *p = sp;
	long argc = p[0];
	char **envp = (char **)(p + 1 + argc + 1);
	char **e = envp;
	struct rlt_trap_libc_cfg cfg;

	while (*e)
		e++;
	cfg.environ = envp;
	cfg.auxv = (const unsigned long *)(e + 1);
	rlt_trap_libc_init(&cfg);
}
