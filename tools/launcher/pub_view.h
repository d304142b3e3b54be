/*
 * pub_view.h: what `rlthrottle top` and `rlthrottle stats` share: a snapshot of the pages of
 * running throttled processes (src/publish.c reads them), rates in units people read, and the
 * JSON form of a snapshot.
 */
#ifndef RLT_CLI_PUB_VIEW_H
#define RLT_CLI_PUB_VIEW_H

#include <stdio.h>
#include <sys/types.h>

#include "publish.h"
#include "publish_read.h"

/* Subcommands' exit status for a bad argument or a PID that is not ours to read. */
#define RLT_CLI_EXIT_USAGE 2

struct rlt_cli_proc {
	pid_t pid;
	char comm[64];
	uint64_t started_unix_ns;
	uint64_t started_ns; /* CLOCK_MONOTONIC */
	unsigned n;
	struct rlt__pub_rule *rules;
	/* RLT_NET: what its conditions did, and those in force: as the page has them ("; "
	 * apart, "" when none), and one by one */
	struct rlt__net_stats net;
	char net_text[RLT_PUB_NET_TEXT];
	unsigned net_n;
	char net_cond[RLT_NET_MAX][RLT_RULE_TEXT_MAX + 1];
};

struct rlt_cli_snap {
	rlt_ns_t now; /* CLOCK_MONOTONIC when read */
	unsigned n;
	struct rlt_cli_proc *procs;
	/* Totals of each shared scope over the processes read (pid 0, comm "shared:NAME", one
	 * rule): what the segment's budget passed for all of them. */
	unsigned nshared;
	struct rlt_cli_proc *shared;
	/* Pages of another layout left out (processes started by an older or newer rlthrottle):
	 * how many, and the line about the first. */
	unsigned other_layout;
	char other_msg[sizeof(struct rlt_error) + 32];
};

/*
 * Reads the pages of pids[0..npids) (npids 0: every live page this user may read). A pid that
 * is not a throttled process of ours fails the whole snapshot (-1, one line in err) when
 * strict; otherwise it is left out (a process that ended between two frames). keep: the pages
 * stay open for the next call (the live view), those of processes gone are closed then.
 */
int rlt_cli_snap_take(struct rlt_cli_snap *sn, const pid_t *pids, unsigned npids, int strict,
                      int keep, struct rlt_error *err);
void rlt_cli_snap_free(struct rlt_cli_snap *sn);

/* The rule's limit in units per second (0 for RLT_CONNS or when unknown). */
double rlt_cli_limit_per_s(const struct rlt__pub_rule *r);
/* Units a second since the page was made. */
double rlt_cli_rate_since_start(const struct rlt_cli_snap *sn, const struct rlt_cli_proc *p,
                                const struct rlt__pub_rule *r);
/* "1.00 MiB/s", "20.0 conn/s", "300 msg/s", as the rule's unit reads (var picks conn or call). */
void rlt_cli_fmt_rate(char *buf, size_t len, double per_s, const struct rlt__pub_rule *r);
/* "1.00 MiB/s" for a rule's limit, or "50 open" for RLT_CONNS, "?" when unknown. */
void rlt_cli_fmt_limit(char *buf, size_t len, const struct rlt__pub_rule *r);

/* Whether process p has RLT_NET conditions, or had (what they did is not all zero). */
int rlt_cli_net_shown(const struct rlt_cli_proc *p);
/* The snapshot as one JSON object (`top --json`, `stats --format json`). */
void rlt_cli_snap_json(FILE *f, const struct rlt_cli_snap *sn);

/* A page truncated under us (its owner is the only one who can) must not kill the reader
 * silently: one line, status 1. Installed by the subcommands that read pages. */
void rlt_cli_guard_sigbus(void);
/* Run by that handler first (async-signal-safe): top restores the terminal. */
extern void (*rlt_cli_before_fatal)(void);

#endif
