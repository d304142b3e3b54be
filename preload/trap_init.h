/*
 * trap_init.h: the handler's start in a new image (trap_init.c), which trap_entry.S's
 * rlt_trap_start calls; the exec of a trapped execve; a fatal signal and the exit.
 */
#ifndef RLT_TRAP_INIT_H
#define RLT_TRAP_INIT_H

#include <signal.h>
#include <ucontext.h>

#include "rlthrottle.h"

struct rlt_inject_hdr;
long rlt_trap_init(struct rlt_inject_hdr *hdr, void *sp);
/* The rules from the environment, as the preload loads them (generation: 0 for the command's
 * own image, 1 and up for later ones, which RLT_INHERIT=0 leaves unthrottled). */
int rlt_trap_load(unsigned generation, struct rlt_error *err);
long rlt_trap_exec(long nr, const long a[6]);
void rlt_trap_fatal(int sig, siginfo_t *si, ucontext_t *uc);
void rlt_trap_exit(int status) __attribute__((noreturn));

#endif
