/*
 * trap_run.c: `rlthrottle --seccomp`: the command runs with the system-call front inside it.
 *
 * Here the launcher only prepares: the fd band (the soft fd limit raised to the hard one, so
 * that sockets have room above the program's files), the filter, and the block the handler's
 * init reads; the injector (inject.c) puts the handler into the command's image and into
 * every image it execs later, and the launcher waits for the command as a parent does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "inject.h"
#include "inject_proto.h"
#include "launcher.h"
#include "trap_abi.h"
#include "trap_blob.h"
#include "trap_filter.h"
#include "trap_run.h"

/* The lowest fd of the band: RLT_TRAP_BAND, or half the fd limit when that is lower. */
static int band_start(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return RLT_TRAP_BAND;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2 * (rlim_t)RLT_TRAP_BAND)
		return (int)(rl.rlim_cur / 2);
	return RLT_TRAP_BAND;
}

static int has(const char *var)
{
	const char *v = getenv(var);
	return v && v[strspn(v, " \t;")];
}

/* The data calls the filter must trap for the command's rules (trap_abi.h RLT_TRAP_SENDS): a
 * send may also be a connect (TCP Fast Open); the network conditions act on both, also when
 * RLT_NET is there but empty (`set PID RLT_NET` may bring some). */
static unsigned classes(void)
{
	unsigned c = 0;
	int net = getenv("RLT_NET") != NULL;

	if (has("RLT_SEND") || has("RLT_CONNECT") || has("RLT_CONNS") || net)
		c |= RLT_TRAP_SENDS;
	if (has("RLT_RECV") || net)
		c |= RLT_TRAP_RECVS;
	return c;
}

static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "rlthrottle: %s\n", line);
}

int rlt_cli_trap_run(char **cmd)
{
	struct rlt__trap_cfg *cfg = calloc(1, sizeof *cfg);
	size_t back_len = sizeof(struct rlt_inject_hdr) + sizeof *cfg + 64;
	unsigned char *back = calloc(1, back_len);
	struct rlt_cli_trap_spec spec = {RLT_TRAP_BASE, RLT_TRAP_SPAN, 0, 0};
	struct rlt_cli_inject_opts opts = {0};
	struct rlt_cli_inject_err ierr = {0, ""};
	struct rlt_error err = {{0}};
	int n, status = RLT_EXIT_OWN;

	if (!cfg || !back) {
		free(cfg);
		free(back);
		fprintf(stderr, "rlthrottle: out of memory\n");
		return RLT_EXIT_OWN;
	}
	spec.band = band_start();
	spec.covers = classes();
	n = rlt_cli_trap_filter(&spec, cfg->filter, RLT_TRAP_FILTER_MAX, &err);
	if (n < 0) {
		fprintf(stderr, "rlthrottle: %s\n", err.msg);
		free(cfg);
		free(back);
		return RLT_EXIT_OWN;
	}
	cfg->magic = RLT_TRAP_MAGIC;
	cfg->version = RLT_TRAP_VERSION;
	cfg->band = spec.band;
	cfg->nfilter = (uint32_t)n;
	cfg->covers = spec.covers;

	opts.blob = rlt_cli_trap_blob;
	opts.blob_len = (size_t)(rlt_cli_trap_blob_end - rlt_cli_trap_blob);
	opts.config = cfg;
	opts.config_len = sizeof *cfg;
	opts.argv = cmd;
	opts.log = log_line;
	opts.readback = back;
	opts.readback_len = back_len;
	if (rlt_cli_inject_run(&opts, &status, &ierr) != 0) {
		/* the handler's own words when its init said why (a bad variable: one line) */
		const struct rlt_inject_hdr *h = (const void *)back;
		const struct rlt__trap_cfg *c = (const void *)(back + h->opaque_off);
		if (h->magic == RLT_INJECT_MAGIC && h->opaque_off + sizeof *c <= back_len &&
		    c->msg[0])
			fprintf(stderr, "rlthrottle: %.*s\n", (int)sizeof c->msg, c->msg);
		else
			fprintf(stderr, "rlthrottle: %s\n", ierr.msg);
		free(cfg);
		free(back);
		return ierr.code == -ENOENT ? RLT_EXIT_NOTFOUND
		       : ierr.code == -EACCES ? RLT_EXIT_CANNOT_RUN
		                              : RLT_EXIT_OWN;
	}
	free(cfg);
	free(back);
	return status;
}
