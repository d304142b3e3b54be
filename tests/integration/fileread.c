/* fileread: reads a file to its end with read() of a given size and prints how long the reading
 * took, measured inside the program, so that the figure is the cost of the reads themselves and
 * not of starting the program (or the launcher that runs it).
 *
 *   fileread FILE [CHUNK]   prints: bytes=N elapsed_ns=NS
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	size_t chunk = argc > 2 ? (size_t)atol(argv[2]) : 128 * 1024;
	uint64_t total = 0, t0;
	int fd;

	if (argc < 2 || chunk == 0 || chunk > sizeof buf) {
		fprintf(stderr, "usage: fileread FILE [CHUNK <= 1 MiB]\n");
		return 2;
	}
	alarm(60);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	t0 = now_ns();
	for (;;) {
		ssize_t n = read(fd, buf, chunk);
		if (n < 0) {
			perror("read");
			return 1;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
	}
	printf("bytes=%llu elapsed_ns=%llu\n", (unsigned long long)total,
	       (unsigned long long)(now_ns() - t0));
	return 0;
}
