/* nbdup: O_NONBLOCK set through a dup of a TCP connection applies to the connection (the flag
 * lives in the open file, which the fds share). Connects to 127.0.0.1:PORT, dups the fd, sets
 * O_NONBLOCK on the dup with F_SETFL, then sends FILE's bytes in one send() on the original.
 *
 *   nbdup PORT FILE
 * Output: "ret=N errno=E took_ms=T"
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	struct stat st;
	char *buf;
	int fd, d, file, fl, err;

	if (argc != 3)
		return 2;
	fd = dial_loopback("127.0.0.1", atoi(argv[1]));
	file = open(argv[2], O_RDONLY);
	if (fd < 0 || file < 0 || fstat(file, &st) != 0)
		return 2;
	buf = malloc((size_t)st.st_size);
	if (!buf || read(file, buf, (size_t)st.st_size) != st.st_size)
		return 2;
	d = dup(fd);
	fl = fcntl(d, F_GETFL);
	if (d < 0 || fl < 0 || fcntl(d, F_SETFL, fl | O_NONBLOCK) != 0)
		return 2;
	uint64_t t0 = now_ns();
	ssize_t n = send(fd, buf, (size_t)st.st_size, MSG_NOSIGNAL);
	err = n < 0 ? errno : 0;
	printf("ret=%zd errno=%s took_ms=%.0f\n", n, err ? ename(err) : "0",
	       (double)(now_ns() - t0) / 1e6);
	close(d);
	close(fd);
	return 0;
}
