/* fnv: FNV-1a 64 of a file or stdin, or generate the test pattern.
 *
 *   fnv [FILE]      prints: bytes=N fnv=HEX
 *   fnv -g BYTES    writes BYTES of the test pattern (the stream blast/source send) to stdout
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itest.h"


int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "-g")) {
		unsigned long long n = strtoull(argv[2], NULL, 10);
		unsigned char *pat = malloc(PAT_LEN);
		uint64_t x = 0x9E3779B97F4A7C15ull;
		for (size_t i = 0; i < PAT_LEN; i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			pat[i] = (unsigned char)(x >> 24);
		}
		unsigned long long pos = 0;
		while (pos < n) {
			size_t off = (size_t)(pos % PAT_LEN), k = PAT_LEN - off;
			if (k > n - pos) k = (size_t)(n - pos);
			if (fwrite(pat + off, 1, k, stdout) != k) return 1;
			pos += k;
		}
		return fflush(stdout) ? 1 : 0;
	}
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
	if (!f) { perror(argv[1]); return 1; }
	static unsigned char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned long long tot = 0;
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, f)) > 0) {
		for (size_t i = 0; i < r; i++) { h ^= buf[i]; h *= 0x100000001b3ull; }
		tot += r;
	}
	printf("bytes=%llu fnv=%016llx\n", tot, (unsigned long long)h);
	return 0;
}
