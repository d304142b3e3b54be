/* The opaque part of the config block of the minimal blob (trapblob_min.c), as injectrun.c
 * writes it: where the blob appends its counts when the image exits, and where its init leaves
 * a message when it fails. */
#ifndef TRAPBLOB_MIN_H
#define TRAPBLOB_MIN_H

struct trapblob_cfg {
	char report[256]; /* a file the blob appends one line to at exit_group; "" for none */
	char msg[128];    /* the init's message on failure, NUL-terminated */
	int no_strip;     /* 1: make rt_sigprocmask and rt_sigaction as asked, SIGSYS not kept
	                   * out (to show what happens then: the benchmark) */
};

#endif
