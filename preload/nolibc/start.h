/*
 * start.h: the subset's start (start.c) and what it sets up in the other files of the subset
 * (clock.c's vDSO, env.c's environ), and what it keeps for the SIGSYS entry (atexit and fork
 * handlers it must run).
 */
#ifndef RLT_NOLIBC_START_H
#define RLT_NOLIBC_START_H

#include "nolibc.h"

/* The address of the function `name` in the vDSO image at `image` (AT_SYSINFO_EHDR), or NULL. */
void *rlt_trap_vdso_sym(const void *image, const char *name);
/* clock_gettime goes through the vDSO at `image` from now on (NULL: the system call). */
void rlt_trap_clock_init(const void *image);

/* environ is env from now on (env.c). */
void rlt_trap_env_init(char **env);

/* The entry point (the ELF's e_entry): environ and the vDSO from cfg, then the constructors
 * (the core's fork handler, the preload's load of the rules). Runs on a thread-block stack.
 * A bad configuration ends the process (status 125, one line), as the preload does. */
void rlt_trap_libc_init(const struct rlt_trap_libc_cfg *cfg);
/* The same from a new image's first stack pointer (argc, argv, envp, auxv). */
void rlt_trap_libc_start(void *sp);
/* What atexit recorded, last first (the SIGSYS entry calls it at the program's exit_group). */
void rlt_trap_run_atexit(void);
/* The child handlers pthread_atfork recorded, in order (at a fork's child, by the entry). */
void rlt_trap_run_atfork_child(void);

#endif
