/*
 * shm_cmd.c: `rlthrottle shm list` shows the shared-scope segments on this machine (name, what
 * they limit, the pid that created them, size); `rlthrottle shm rm NAME...` removes them.
 * Removing a segment does not disturb processes that have it mapped: they keep their budget
 * until they exit, and the next process to name the scope creates it afresh.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc_stat.h"
#include "scope_command.h"
#include "scope_shm.h"
#include "shm_cmd.h"

static const char *unit_suffix(uint32_t unit)
{
	switch (unit) {
	case RLT_UNIT_BYTES: return "B";
	case RLT_UNIT_MSGS: return "msg";
	default: return "";
	}
}

/* A command's own segment (rlthrottle(1) DESCRIPTION): whose, and whether its launcher still
 * runs; its rules' segments, NAME.VAR.INDEX.HASH, are listed as any other. 1 when it was one. */
static int print_command(const struct rlt__shm_info *in)
{
	struct rlt__proc_stat ps;
	uint64_t start;
	pid_t pid;

	if (!rlt__cmd_parse(in->name, &pid, &start))
		return 0;
	if (rlt__proc_stat(pid, &ps) == 0 && ps.start == start)
		printf("%-24s %-36s %-8d %10llu  the command of launcher %d (running)\n", in->name,
		       "(the command's statistics)", (int)pid, (unsigned long long)in->size,
		       (int)pid);
	else
		printf("%-24s %-36s %-8d %10llu  the command of launcher %d, gone: `rlthrottle shm "
		       "rm %s` removes it and its rules' segments\n",
		       in->name, "(the command's statistics)", (int)pid,
		       (unsigned long long)in->size, (int)pid, in->name);
	return 1;
}

static void print_one(const struct rlt__shm_info *in, void *ctx)
{
	const struct rlt__shm_hdr *h = &in->hdr;
	char what[160], when[32] = "-";
	int *count = ctx;
	int set = h->set_gen != 0; /* a copy: a plain read */

	(*count)++;
	if (print_command(in))
		return;
	if (!in->readable && in->not_file) {
		printf("%-24s %-36s %-8s %10s  %s of uid %u, not a segment (shm rm removes it)\n",
		       in->name, "?", "?", "-", in->not_file, (unsigned)in->uid);
		return;
	}
	if (!in->readable) {
		printf("%-24s %-36s %-8s %10llu  uid %u mode %04o (not readable by us)\n", in->name,
		       "?", "?", (unsigned long long)in->size, (unsigned)in->uid, (unsigned)in->mode);
		return;
	}
	if (!in->valid && in->size < sizeof in->hdr) {
		/* the creator sizes the segment right after making it: empty is that moment */
		printf("%-24s %-36s %-8s %10llu  (%s)\n", in->name, "?", "?",
		       (unsigned long long)in->size,
		       in->size ? "truncated: shorter than a header; remove it"
		                : "empty: being created, or truncated");
		return;
	}
	if (!in->valid) {
		printf("%-24s %-36s %-8s %10llu  (not ready, or not of this version)\n", in->name,
		       "?", "?", (unsigned long long)in->size);
		return;
	}
	if (in->size < h->size) {
		printf("%-24s %-36s %-8d %10llu  (truncated: %llu bytes expected; its users die of "
		       "SIGBUS; remove it)\n",
		       in->name, "?", (int)h->creator, (unsigned long long)in->size,
		       (unsigned long long)h->size);
		return;
	}
	if (h->unit == RLT_UNIT_CONNS)
		snprintf(what, sizeof what, "%s %llu open (now %u)", rlt_var_name((enum rlt_var)h->var),
		         (unsigned long long)h->rate_num, (unsigned)atomic_load(&h->open));
	else if (h->algo == RLT_ALGO_TOKEN || h->algo == RLT_ALGO_LEAKY) {
		/* the rule in force since `rlthrottle set` when there was one (the copy is a
		 * moment's: it may tear, and this is a listing), else the creator's */
		int s = set && h->set_params.rate_den_ns;
		uint64_t num = s ? h->set_params.rate_num : h->rate_num;
		uint64_t den = s ? h->set_params.rate_den_ns : h->rate_den_ns;
		uint64_t burst = s ? h->set_params.burst : h->burst;
		snprintf(what, sizeof what, "%s %s %.9g%s/s burst=%llu",
		         rlt_var_name((enum rlt_var)h->var), rlt_algo_name((enum rlt_algo)h->algo),
		         (double)num * 1e9 / (double)den, unit_suffix(h->unit),
		         (unsigned long long)burst);
	} else
		snprintf(what, sizeof what, "%s %s %llu%s/%gs", rlt_var_name((enum rlt_var)h->var),
		         rlt_algo_name((enum rlt_algo)h->algo), (unsigned long long)h->limit,
		         unit_suffix(h->unit), (double)h->window_ns / 1e9);
	if (h->key != RLT_KEY_NONE) { /* the limit is each key's: keys= of them in the segment */
		size_t n = strlen(what);
		snprintf(what + n, sizeof what - n, " per key");
	}
	char text[RLT_RULE_TEXT_MAX * 2 + 32];
	if (set)
		snprintf(text, sizeof text, "%.*s\" (set; created as \"%.*s", RLT_RULE_TEXT_MAX,
		         h->set_text, RLT_RULE_TEXT_MAX, h->text);
	else
		snprintf(text, sizeof text, "%.*s", RLT_RULE_TEXT_MAX, h->text);
	time_t t = (time_t)h->created;
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	if (in->size > h->size)
		printf("%-24s %-36s %-8d %10llu  %s  \"%s\" (longer than expected: %llu bytes used, "
		       "the rest ignored)\n",
		       in->name, what, (int)h->creator, (unsigned long long)in->size, when, text,
		       (unsigned long long)h->size);
	else
		printf("%-24s %-36s %-8d %10llu  %s  \"%s\"\n", in->name, what, (int)h->creator,
		       (unsigned long long)in->size, when, text);
}

static int list(void)
{
	struct rlt_error err;
	int count = 0;

	printf("%-24s %-36s %-8s %10s  %s\n", "NAME", "LIMIT", "CREATOR", "BYTES", "CREATED / RULE");
	if (rlt__shm_list(print_one, &count, &err) != 0) {
		fprintf(stderr, "rlthrottle: shm list: %s\n", err.msg);
		return 1;
	}
	return 0;
}

int rlt_cli_shm_cmd(int argc, char **argv)
{
	int rc = 0;
	static const char usage_text[] =
		"usage: rlthrottle shm list\n"
		"       rlthrottle shm rm NAME...\n"
		"The segments of scope=shared:NAME rules (/dev/shm/rlthrottle.NAME), and of\n"
		"commands run with one budget (cmd-PID-START: rm removes the command's\n"
		"segment and its rules', cmd-PID-START.*).\n";

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "list") && argc == 2)
		return list();
	if (argc >= 3 && !strcmp(argv[1], "rm")) {
		for (int i = 2; i < argc; i++) {
			struct rlt_error err;
			uint64_t start;
			pid_t pid;
			/* a command's name: its segment and its rules' (NAME.*) */
			if (rlt__cmd_parse(argv[i], &pid, &start) && rlt__cmd_remove(argv[i]) > 0)
				continue;
			if (rlt__shm_remove(argv[i], &err) != 0) {
				fprintf(stderr, "rlthrottle: shm rm: %s\n", err.msg);
				rc = 1;
			}
		}
		return rc;
	}
	fprintf(stderr, "rlthrottle: shm: expected list, or rm NAME...\n%s", usage_text);
	return 2;
}
