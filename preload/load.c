/*
 * load.c: what both ways into a program share once the rules are in: loading them from the
 * environment, the log, the owner of our state, the summary and the page at the end, and the
 * state a forked child starts from. The preload's constructor (init.c) and the system-call
 * front's init (trap_init.c) each call rlt_pre_load, then add what their way in needs.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accept_queue.h"
#include "clock.h"
#include "conns.h"
#include "fdtable.h"
#include "load.h"
#include "net.h"
#include "net_hook.h"
#include "publish.h"
#include "real.h"
#include "ruleset_env.h"
#include "scope_command.h"
#include "settings.h"
#include "stats.h"
#include "stats_count.h"

struct rlt__ruleset rlt_pre_rules;
_Atomic int rlt_pre_active;
unsigned rlt_pre_vars_in_use;
int rlt_pre_loglevel = RLT_LOG_WARN;

/* The process our state describes: set at load and in a fork's child (see rlt_pre_borrowed). */
static _Atomic pid_t owner;

static char stats_tmpl[RLT_STATS_PATH_MAX];
/* Our page is published (publish.c): its name goes at exit. */
static int publishing;
static rlt_ns_t started;
static _Atomic int stats_written;

/* stderr through the real write: never through our own hook, never through stdio's buffer. */
void rlt_pre_say(const char *s, size_t n)
{
	while (n) {
		ssize_t w = real_write ? real_write(2, s, n) : syscall(SYS_write, 2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void rlt_pre_log(int level, const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	va_list ap;

	if (level > rlt_pre_loglevel)
		return;
	va_start(ap, fmt);
	rlt_pre_say(line, rlt__log_line(line, sizeof line, getpid(), fmt, ap));
	va_end(ap);
	errno = saved;
}

void rlt_pre_write_stats(void)
{
	struct rlt_error err;

	if (!stats_tmpl[0] || atomic_exchange(&stats_written, 1))
		return;
	/* a process of the launcher's command adds its counts to the command's, which the
	 * launcher writes as one line when the command ends */
	if (rlt_pre_rules.command[0] && rlt__cmd_add(rlt_pre_rules.command, &rlt_pre_rules) == 0)
		return;
	if (rlt__stats_to(stats_tmpl, &rlt_pre_rules, real_write, real_close, getpid(),
	                  rlt__now() - started, &err) != 0)
		rlt_pre_log(RLT_LOG_ERROR, "%s", err.msg);
}

/* Our page's name goes when we do; the mapping stays for threads still counting. Only the
 * process the page describes removes it: a vfork child shares it, and the child of a fork that
 * ran no handlers (_Fork, a raw clone) still has its parent's mapped. */
void rlt_pre_unpublish(void)
{
	struct rlt__pub *p = rlt_pre_rules.pub;
	if (publishing && p && p->hdr->pid == (int32_t)syscall(SYS_getpid))
		rlt__pub_unlink(p);
}

int rlt_pre_borrowed(void)
{
	pid_t o = atomic_load_explicit(&owner, memory_order_relaxed), me;
	int saved = errno;
	long vm;

	/* a raw system call: the C library no longer caches the pid, and a vfork child's copy
	 * of any cache would be the parent's */
	if (!o || (me = (pid_t)syscall(SYS_getpid)) == o)
		return 0;
	/* Another process. A vfork child shares our memory. A child of a fork that ran no
	 * handlers (_Fork, a raw clone) has a copy of its own, which it keeps true from now on;
	 * so does a child whose parent is gone. When the kernel will not tell (kcmp refused),
	 * hands off. */
	vm = syscall(SYS_kcmp, me, o, KCMP_VM, 0, 0);
	if (vm == 0 || (vm < 0 && errno != ESRCH)) {
		errno = saved;
		return 1;
	}
	atomic_store_explicit(&owner, me, memory_order_relaxed);
	errno = saved;
	return 0;
}

void rlt_pre_forked(void)
{
	/* first, for the handlers registered after ours (they may close fds); those before
	 * ours are told from a vfork child by rlt_pre_borrowed */
	atomic_store_explicit(&owner, (pid_t)syscall(SYS_getpid), memory_order_relaxed);
	/* a thread of the parent applying a set when it forked is not in the child: its claim
	 * would keep the child from ever following a set (each swap is one pointer store, so
	 * nothing is left half-made) */
	atomic_store_explicit(&rlt_pre_rules.applying, 0, memory_order_relaxed);
	rlt_pre_acceptq_forked();
	if (rlt_pre_rules.n[RLT_VAR_CONNS]) {
		/* shared RLT_CONNS: what the child inherited is counted again, as its own */
		uint32_t held[RLT_MAX_RULES_PER_VAR];
		rlt__conns_identity();
		rlt_pre_fdtable_conns_held(held);
		rlt__conns_forked(&rlt_pre_rules, held);
	}
	/* The child starts where the parent's budgets stood (the memory is a copy) but reports
	 * its own calls, and publishes them in its own page: the one mapped is the parent's. */
	started = rlt__now();
	atomic_store(&stats_written, 0);
	if (rlt_pre_rules.pub) {
		rlt__pub_forked(&rlt_pre_rules, (pid_t)syscall(SYS_getpid));
		if (rlt_pre_rules.pub)
			publishing = 1;
	}
	/* after the counters start again: the keys tracked are the table's, which the child has */
	rlt__ruleset_keys_forked(&rlt_pre_rules);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rlt_pre_rules.n[v]; i++)
			rlt__stats_zero(rlt_pre_rules.rules[v][i].st);
	memset(rlt__net_counts, 0, sizeof *rlt__net_counts); /* RLT_NET's too: the child's own */
}

int rlt_pre_exec_begin(void)
{
	struct rlt__pub *p = rlt_pre_rules.pub;

	if (!publishing || !p || rlt_pre_borrowed() || p->hdr->pid != (int32_t)syscall(SYS_getpid))
		return 0;
	rlt__pub_unlink(p);
	return 1;
}

void rlt_pre_exec_failed(int hid)
{
	if (hid && rlt__pub_relink(rlt_pre_rules.pub) != 0)
		rlt_pre_log(RLT_LOG_INFO, "publishing: the page could not be made again after a "
		                          "failed exec (running unpublished)");
}

int rlt_pre_load(const struct rlt__settings *set, struct rlt_error *err)
{
	started = rlt__now();
	rlt_pre_loglevel = set->loglevel;
	strcpy(stats_tmpl, set->stats);
	if (rlt__ruleset_from_env(&rlt_pre_rules, set, rlt_pre_log, err) != 0)
		return -1;
	rlt_pre_vars_in_use = rlt_pre_rules.vars_in_use;
	if (rlt_pre_net_load(err) != 0)
		return -1;
	if (set->publish) {
		/* a process that cannot publish runs on, counting privately; a full /dev/shm is
		 * worth a warning (top, stats and set will not see it), a missing one not */
		int prc = rlt__pub_create(&rlt_pre_rules, (pid_t)syscall(SYS_getpid), err);
		if (prc != 0)
			rlt_pre_log(prc == -ENOSPC ? RLT_LOG_WARN : RLT_LOG_INFO,
			            "%s (running unpublished)", err->msg);
		else if (rlt_pre_rules.pub)
			publishing = 1;
	}
	rlt_pre_fdtable_init();
	atomic_store_explicit(&owner, (pid_t)syscall(SYS_getpid), memory_order_relaxed);
	rlt__ruleset_log(&rlt_pre_rules, rlt_pre_log, "");
	return 0;
}

int rlt_pre_publishing(void)
{
	return publishing;
}

int rlt_pre_summary_wanted(void)
{
	return stats_tmpl[0] != 0;
}

void rlt_pre_go(void)
{
	atomic_store_explicit(&rlt_pre_active, 1, memory_order_release);
	rlt_pre_gate_open();
}
