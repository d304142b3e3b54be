/*
 * init.c: loading the rules when the library loads, before the program's main.
 *
 * A bad variable ends the process with status 125 after one line on stderr (or, with
 * RLT_ON_ERROR=ignore, the bad rule is left out with a warning): a throttle that silently
 * did not apply would make every measurement taken under it a lie.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "preload.h"
#include "scope_redis.h"
#include "stats.h"

struct rlt__ruleset rlt__rules;
_Atomic int rlt__active;
unsigned rlt__vars_in_use;
int rlt__loglevel = RLT_LOG_WARN;

static char stats_tmpl[1024];
static rlt_ns_t started;
static _Atomic int stats_written;

/* stderr through the real write: never through our own hook, never through stdio's buffer. */
static void say(const char *s, size_t n)
{
	while (n) {
		ssize_t w = real_write ? real_write(2, s, n) : syscall(SYS_write, 2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

void rlt__log(int level, const char *fmt, ...)
{
	char line[1024];
	int saved = errno, n;
	va_list ap;

	if (level > rlt__loglevel)
		return;
	n = snprintf(line, sizeof line, "rlthrottle[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	say(line, (size_t)n);
	errno = saved;
}

static void fatal(const char *msg)
{
	say("rlthrottle: ", 12);
	say(msg, strlen(msg));
	say("\n", 1);
	_exit(125);
}

static void warn_rule(const char *msg, void *ctx)
{
	(void)ctx;
	rlt__log(RLT_LOG_WARN, "%s (rule ignored: RLT_ON_ERROR=ignore)", msg);
}

static void write_stats(void)
{
	char path[1100];
	pid_t pid = getpid();
	int fd;

	if (!stats_tmpl[0] || atomic_exchange(&stats_written, 1))
		return;
	if (strcmp(stats_tmpl, "stderr") == 0) {
		fd = 2;
	} else {
		if (rlt__stats_path(stats_tmpl, pid, path, sizeof path) != 0)
			return;
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			rlt__log(RLT_LOG_ERROR, "RLT_STATS: cannot write %s", path);
			return;
		}
	}
	rlt__stats_write(&rlt__rules, real_write, fd, pid, rlt__now() - started);
	if (fd != 2)
		real_close(fd);
}

/* A fatal signal the program does not handle: write the summary, then die of the signal. */
static void on_fatal_signal(int sig)
{
	write_stats();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	/* Only signals the program has left at their default: a handler it installs later
	 * replaces ours, which is what it asked for. SIGINT is left alone because interpreters
	 * (python) install their own only where they find SIG_DFL. */
	static const int sigs[] = {SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
			struct sigaction sa = {.sa_handler = on_fatal_signal};
			sigemptyset(&sa.sa_mask);
			sigaction(sigs[i], &sa, NULL);
		}
	}
}

static void atfork_child(void)
{
	rlt__fdtable_atfork_child();
	/* The child starts where the parent's budgets stood (the memory is a copy) but reports
	 * its own calls. */
	started = rlt__now();
	atomic_store(&stats_written, 0);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rlt__rules.n[v]; i++) {
			struct rlt__stats *st = &rlt__rules.rules[v][i].st;
			memset(st, 0, sizeof *st);
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

static int parse_level(const char *s)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

__attribute__((constructor)) static void rlt_load(void)
{
	const char *values[RLT_VAR_COUNT];
	const char *s;
	struct rlt_error err = {{0}};
	int ignore = 0;
	char msg[700];

	rlt__real_init();
	started = rlt__now();

	if ((s = getenv("RLT_LOG")) && *s) {
		int lv = parse_level(s);
		if (lv < 0) {
			snprintf(msg, sizeof msg,
			         "RLT_LOG=\"%.100s\": unknown level (error, warn, info, debug)", s);
			fatal(msg);
		}
		rlt__loglevel = lv;
	}
	if ((s = getenv("RLT_ON_ERROR")) && *s) {
		if (strcmp(s, "ignore") == 0)
			ignore = 1;
		else if (strcmp(s, "exit") != 0) {
			snprintf(msg, sizeof msg,
			         "RLT_ON_ERROR=\"%.100s\": must be exit or ignore", s);
			fatal(msg);
		}
	}
	if ((s = getenv("RLT_INHERIT")) && *s) {
		if (strcmp(s, "0") == 0)
			drop_from_ld_preload();
		else if (strcmp(s, "1") != 0) {
			snprintf(msg, sizeof msg, "RLT_INHERIT=\"%.100s\": must be 0 or 1", s);
			fatal(msg);
		}
	}
	if ((s = getenv("RLT_STATS")) && *s) {
		if (strlen(s) >= sizeof stats_tmpl)
			fatal("RLT_STATS: the path is too long");
		strcpy(stats_tmpl, s);
		rlt__rules.stats_on = 1;
	}
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		values[v] = getenv(rlt_var_name((enum rlt_var)v));
	rlt__scope_log = rlt__log; /* redis scopes: one line per outage */
	if (rlt__ruleset_build(&rlt__rules, values, ignore, warn_rule, NULL, &err) != 0)
		fatal(err.msg);
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		if (rlt__rules.n[v])
			rlt__vars_in_use |= 1u << v;

	rlt__fdtable_init();
	pthread_atfork(NULL, NULL, atfork_child);
	if (stats_tmpl[0]) {
		atexit(write_stats);
		catch_fatal_signals();
	}
	for (int v = 0; v < RLT_VAR_COUNT; v++)
		for (unsigned i = 0; i < rlt__rules.n[v]; i++) {
			char canon[1024];
			rlt_rule_format(&rlt__rules.rules[v][i].rule, canon, sizeof canon);
			rlt__log(RLT_LOG_INFO, "%s: %s", rlt_var_name((enum rlt_var)v), canon);
		}
	atomic_store_explicit(&rlt__active, 1, memory_order_release);
}

/* A program that ends with _exit or returns from main after destructors: write the summary in
 * a destructor too (write_stats runs once). */
__attribute__((destructor)) static void rlt_unload(void)
{
	write_stats();
}
