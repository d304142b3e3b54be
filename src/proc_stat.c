/*
 * proc_stat.c: /proc/PID/stat, for the places that must tell whether a process is still the one
 * they knew: RLT_CONNS holders of a shared segment (conns.c), a keyed table's lock holders
 * (keytab.c), and a page's owner. One reader, because counting its fields is easy to get wrong
 * (field 23 was once read for 22).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc_stat.h"

/* "/proc/PID/stat", formatted by hand: snprintf is not async-signal-safe. */
static void stat_path(char out[48], pid_t pid)
{
	char digits[12];
	int n = 0, o;
	unsigned v = (unsigned)pid;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof digits);
	memcpy(out, "/proc/", 6);
	o = 6;
	while (n)
		out[o++] = digits[--n];
	memcpy(out + o, "/stat", 6);
}

int rlt__proc_stat(pid_t pid, struct rlt__proc_stat *out)
{
	char path[48], buf[1024];
	int fd;
	long n;

	if (pid <= 0)
		return -1;
	stat_path(path, pid);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, spaces and ')' too; the last ')' ends it */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	out->state = p[2];
	p += 2; /* at field 3 */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
		if (field == 3)
			out->ppid = (pid_t)strtol(p, NULL, 10); /* field 4 */
	}
	out->start = strtoull(p, NULL, 10);
	return 0;
}
