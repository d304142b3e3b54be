/* error.c: see error.h. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int rlt__fail(struct rlt_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}
