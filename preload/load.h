/*
 * load.h: the state both ways into a program share once the rules are in (load.c): the loaded
 * rules, the log, the owner of our state, the summary and the page at the end, a fork's and an
 * exec's state. The preload's constructor (init.c) and the system-call front's init
 * (trap_init.c) each call rlt_pre_load.
 */
#ifndef RLT_LOAD_H
#define RLT_LOAD_H

#include <stdatomic.h>
#include <stddef.h>

#include "policy.h"
#include "rlthrottle.h"
#include "settings.h"

extern struct rlt__ruleset rlt_pre_rules;
/* 1 once the rules are loaded and hooks may throttle; before that hooks pass straight through. */
extern _Atomic int rlt_pre_active;
/* Which variables have any rule at all (bit per enum rlt_var): a hook for a variable with no
 * rule costs one load. */
extern unsigned rlt_pre_vars_in_use;

extern int rlt_pre_loglevel;
void rlt_pre_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Loads the rules and what goes with them (load.c), for both ways in; the process is not
 * throttled until rlt_pre_go. -1 with err set on a bad variable. */
int rlt_pre_load(const struct rlt__settings *set, struct rlt_error *err);
void rlt_pre_go(void);
/* stderr through the real write, never through a hook or stdio's buffer. */
void rlt_pre_say(const char *s, size_t n);
/* The RLT_STATS summary, once per process (rlthrottle(7) STATISTICS); whether one is wanted, whether we
 * publish a page. */
void rlt_pre_write_stats(void);
int rlt_pre_summary_wanted(void);
int rlt_pre_publishing(void);
/* In a forked child, before anything else of ours runs: our state becomes the child's own. */
void rlt_pre_forked(void);

/* 1 when the caller runs in our memory without being the process our state describes: the
 * child of vfork() or posix_spawn() (CPython's subprocess), before it execs. Its fd table is
 * its own, so what it closes or duplicates says nothing about ours, and it must change none
 * of our state. TLS cannot tell it from the parent's thread (they share it); its pid can.
 * A system call (two in such a child): only for the calls that change the fd table, never on
 * a hot path. */
int rlt_pre_borrowed(void);
/* Removes this process's published page (rlthrottle(1) COMMANDS), if the page is this process's own: a vfork
 * child and the child of a fork that ran no handlers share or copy their parent's. At exit, at
 * a fatal signal, and in the _exit hook (hook_exit.c). */
void rlt_pre_unpublish(void);
/* An exec (hook_exec.c): the page is this image's, so its name goes before the new image runs
 * (a throttled one makes its own; a program not throttled, by RLT_INHERIT=0, its own
 * environment, or a static or setuid binary, is then not listed as throttled, nor is a `set`
 * left pending for it). _begin returns 1 when it removed the name; _failed(1) puts it back
 * (the exec failed: this image goes on). */
int rlt_pre_exec_begin(void);
void rlt_pre_exec_failed(int hid);

#endif
