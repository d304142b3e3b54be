/* injectrun: the injector alone (tools/launcher/inject.c), for the tests and benchmarks of issue 21
 * until `rlthrottle --seccomp` uses it.
 *   injectrun [-r REPORT] [-n] BLOB -- CMD [ARG...]
 * runs CMD with BLOB injected; the opaque config is the minimal blob's (trapblob_min.h):
 * REPORT is where it appends its counts at exit; -n: it leaves the program's signal masks
 * as asked (SIGSYS not kept out). A setup failure: one line, status 125. */
#include "inject.h"
#include "inject_proto.h"
#include "trapblob_min.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void log_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "injectrun: %s\n", line);
}

int main(int argc, char **argv)
{
	struct rlt_cli_inject_opts o = {0};
	struct rlt_cli_inject_err err;
	struct trapblob_cfg cfg;
	unsigned char back[sizeof(struct trapblob_cfg) + 256];
	static unsigned char blob[4 << 20];
	size_t n;
	FILE *f;
	int c, status;

	memset(&cfg, 0, sizeof cfg);
	while ((c = getopt(argc, argv, "+r:n")) != -1) {
		if (c == 'n') {
			cfg.no_strip = 1;
			continue;
		}
		if (c != 'r' || strlen(optarg) >= sizeof cfg.report) {
			fprintf(stderr, "usage: injectrun [-r REPORT] [-n] BLOB -- CMD [ARG...]\n");
			return 125;
		}
		strcpy(cfg.report, optarg);
	}
	if (optind + 1 >= argc) {
		fprintf(stderr, "usage: injectrun [-r REPORT] [-n] BLOB -- CMD [ARG...]\n");
		return 125;
	}
	if (!(f = fopen(argv[optind], "rb"))) {
		fprintf(stderr, "injectrun: cannot open %s: %s\n", argv[optind], strerror(errno));
		return 125;
	}
	n = fread(blob, 1, sizeof blob, f);
	fclose(f);
	optind++;
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	o.blob = blob;
	o.blob_len = n;
	o.config = &cfg;
	o.config_len = sizeof cfg;
	o.argv = argv + optind;
	o.readback = back;
	o.readback_len = sizeof back;
	o.log = log_line;
	memset(back, 0, sizeof back);
	if (rlt_cli_inject_run(&o, &status, &err) != 0) {
		/* the blob's own message, at its offset in the opaque part */
		const struct rlt_inject_hdr *h = (const void *)back;
		const struct trapblob_cfg *b = (const void *)(back + h->opaque_off);
		if (h->magic == RLT_INJECT_MAGIC && h->opaque_off <= sizeof back - sizeof *b &&
		    b->msg[0])
			fprintf(stderr, "injectrun: %s (%.*s)\n", err.msg, (int)sizeof b->msg, b->msg);
		else
			fprintf(stderr, "injectrun: %s\n", err.msg);
		return err.code == -ENOENT || err.code == -EACCES ? 127 : 125;
	}
	return status;
}
