/* proc_stat.h: what /proc/PID/stat says of a process, read without calling any hooked function. */
#ifndef RLT_PROC_STAT_H
#define RLT_PROC_STAT_H

#include <stdint.h>
#include <sys/types.h>

struct rlt__proc_stat {
	char state;     /* field 3: R, S, D, Z, X, ... */
	pid_t ppid;     /* field 4 */
	uint64_t start; /* field 22: clock ticks after boot; tells a process from a later one given
	                 * the same pid */
};

/* 0, or -1 when the process is not there (or its stat cannot be read). Raw system calls and no
 * stdio: the connect and accept hooks reach it, and a signal handler may be on the stack. */
int rlt__proc_stat(pid_t pid, struct rlt__proc_stat *out);

#endif
