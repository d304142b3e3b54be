/* hiredis_dl.c: see hiredis_dl.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "hiredis_dl.h"

struct rlt__hiredis rlt__hr;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc;
static char load_msg[256];

/* The soname of Debian 12's libhiredis0.14 first, then newer and unversioned names. */
static const char *const names[] = {"libhiredis.so.0.14", "libhiredis.so.1.1.0",
                                    "libhiredis.so"};

static void load(void)
{
	void *h = NULL;

	for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_msg, sizeof load_msg,
		         "scope=redis:// needs the hiredis library (Debian: libhiredis0.14): %s",
		         dlerror());
		load_rc = -ENOENT;
		return;
	}
#define SYM(field, name)                                                                         \
	do {                                                                                     \
		*(void **)&rlt__hr.field = dlsym(h, name);                                       \
		if (!rlt__hr.field) {                                                            \
			snprintf(load_msg, sizeof load_msg, "hiredis has no %s", name);          \
			load_rc = -ENOENT;                                                       \
			return;                                                                  \
		}                                                                                \
	} while (0)
	SYM(connect_with_timeout, "redisConnectWithTimeout");
	SYM(set_timeout, "redisSetTimeout");
	SYM(free_context, "redisFree");
#undef SYM
}

int rlt__hiredis_load(struct rlt_error *err)
{
	pthread_once(&once, load);
	if (load_rc && err)
		snprintf(err->msg, sizeof err->msg, "%s", load_msg);
	return load_rc;
}
