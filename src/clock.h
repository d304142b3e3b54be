/* clock.h: the one clock the throttle reads: CLOCK_MONOTONIC in integer ns. */
#ifndef RLT_CLOCK_H
#define RLT_CLOCK_H

#include <time.h>

#include "rlthrottle.h"

static inline rlt_ns_t rlt__now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (rlt_ns_t)ts.tv_sec * RLT_NS_PER_SEC + (rlt_ns_t)ts.tv_nsec;
}

#endif
