/*
 * init.c: the preload's way in: loading the rules when the library loads, before the
 * program's main (load.c), and what a preloaded library adds: the fork handler, the exit
 * handlers, the fatal signals, and RLT_INHERIT=0 in LD_PRELOAD.
 *
 * A bad variable ends the process with status 125 after one line on stderr (or, with
 * RLT_ON_ERROR=ignore, the bad rule is left out with a warning): a throttle that silently
 * did not apply would make every measurement taken under it a lie.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hook_stdio.h"
#include "load.h"
#include "real.h"
#include "settings.h"
#include "trap_abi.h"

static void fatal(const char *msg)
{
	rlt_pre_say("rlthrottle: ", 12);
	rlt_pre_say(msg, strlen(msg));
	rlt_pre_say("\n", 1);
	_exit(125);
}

/* A fatal signal the program does not handle: write the summary and remove our page, then
 * die of the signal. */
static void on_fatal_signal(int sig)
{
	rlt_pre_write_stats();
	rlt_pre_unpublish();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	/* Only signals the program has left at their default: a handler it installs later
	 * replaces ours, which is what it asked for. SIGINT is left alone because interpreters
	 * (python) install their own only where they find SIG_DFL. SIGPIPE is how a network
	 * program that writes to a closed connection usually dies. */
	static const int sigs[] = {SIGTERM, SIGHUP, SIGPIPE};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
			struct sigaction sa = {.sa_handler = on_fatal_signal};
			sigemptyset(&sa.sa_mask);
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

/* RLT_INHERIT=0: programs this one executes do not load us. Removing our entry from
 * LD_PRELOAD here covers every exec* call and every environment copied from environ. */
static void drop_from_ld_preload(void)
{
	const char *lp = getenv("LD_PRELOAD");
	char out[4096];
	size_t n = 0;

	if (!lp)
		return;
	for (const char *p = lp; *p;) {
		size_t len = strcspn(p, ": ");
		const char *base = p;
		for (size_t i = 0; i < len; i++)
			if (p[i] == '/')
				base = p + i + 1;
		int ours = (size_t)(p + len - base) >= 15 && !strncmp(base, "librlthrottle", 13);
		if (!ours && len && n + len + 2 < sizeof out) {
			if (n)
				out[n++] = ':';
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
		p += strspn(p, ": ");
	}
	out[n] = '\0';
	if (n)
		setenv("LD_PRELOAD", out, 1);
	else
		unsetenv("LD_PRELOAD");
}

/* Under the system-call front (rlthrottle --seccomp) the handler injected into this process
 * decides every call, the C library's too: the preload stands aside with no rule, or each call
 * would be charged twice. The handler is mapped at its fixed address before the program's
 * first instruction, so one look at that page tells. */
static int trap_front_here(void)
{
	return msync((void *)(uintptr_t)RLT_TRAP_BASE, 4096, MS_ASYNC) == 0;
}

__attribute__((constructor)) static void rlt_load(void)
{
	struct rlt_error err = {{0}};
	struct rlt__settings set;

	rlt_pre_real_init();
	if (trap_front_here()) {
		rlt_pre_go(); /* no rule loaded: every call passes at the gate */
		return;
	}
	if (rlt__settings_read(&set, &err) != 0)
		fatal(err.msg);
	if (!set.inherit)
		drop_from_ld_preload();
	if (rlt_pre_load(&set, &err) != 0)
		fatal(err.msg);
	pthread_atfork(NULL, NULL, rlt_pre_forked);
	if (rlt_pre_summary_wanted())
		atexit(rlt_pre_write_stats);
	if (rlt_pre_publishing())
		atexit(rlt_pre_unpublish);
	if (rlt_pre_summary_wanted() || rlt_pre_publishing())
		catch_fatal_signals();
	rlt_pre_go();
	rlt_pre_stdio_init();
}

/* A program that ends with _exit or returns from main after destructors: write the summary in
 * a destructor too (write_stats runs once). */
__attribute__((destructor)) static void rlt_unload(void)
{
	rlt_pre_write_stats();
	rlt_pre_unpublish();
}
