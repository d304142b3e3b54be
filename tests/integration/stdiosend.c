/* stdiosend: FILE's bytes through C stdio or dprintf, to a socket (issue 17 row 3).
 *
 *   stdiosend fdopen FILE PORT    fdopen(socket, "w"), fwrite in 64 KiB pieces, fclose
 *   stdiosend dprintf FILE PORT   dprintf(socket, "%.*s", ...) per 64 KiB, close
 *   stdiosend stdout FILE         fwrite to stdout (a socket the caller gave as fd 1), fflush
 *
 * Prints "bytes=N took_ms=T" on stderr. */
#include <fcntl.h>
#include <sys/stat.h>

#include "itest.h"

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int f = open(argv[2], O_RDONLY);
	struct stat st;
	if (f < 0 || fstat(f, &st) != 0)
		return 2;
	size_t len = (size_t)st.st_size, chunk = 65536;
	char *data = malloc(len);
	if (!data || read(f, data, len) != (ssize_t)len)
		return 2;
	uint64_t t0 = now_ns();
	if (!strcmp(argv[1], "fdopen") && argc == 4) {
		FILE *o = fdopen(dial_or_exit(atoi(argv[3])), "w");
		for (size_t off = 0; o && off < len; off += chunk)
			if (fwrite(data + off, 1, len - off < chunk ? len - off : chunk, o) == 0)
				return 1;
		if (!o || fclose(o) != 0)
			return 1;
	} else if (!strcmp(argv[1], "dprintf") && argc == 4) {
		int s = dial_or_exit(atoi(argv[3]));
		for (size_t off = 0; off < len; off += chunk)
			if (dprintf(s, "%.*s", (int)(len - off < chunk ? len - off : chunk), data + off) < 0)
				return 1;
		close(s);
	} else if (!strcmp(argv[1], "stdout")) {
		for (size_t off = 0; off < len; off += chunk)
			if (fwrite(data + off, 1, len - off < chunk ? len - off : chunk, stdout) == 0)
				return 1;
		if (fflush(stdout) != 0)
			return 1;
	} else {
		return 2;
	}
	fprintf(stderr, "bytes=%zu took_ms=%llu\n", len, (unsigned long long)((now_ns() - t0) / 1000000));
	return 0;
}
