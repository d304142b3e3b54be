/* error.h: an error as a value (struct rlt_error, include/rlthrottle.h), formatted once. */
#ifndef RLT_ERROR_H
#define RLT_ERROR_H

#include "rlthrottle.h"

/* Formats the message into err->msg (cut to its size) and returns code, so that a failing path
 * reads `return rlt__fail(err, -EINVAL, "...", ...);`. */
int rlt__fail(struct rlt_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
