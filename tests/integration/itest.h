/* itest.h: what the integration test helpers share: clocks, the errno name, the FNV-1a 64
 * checksum and the test byte pattern (so that a sender's and a receiver's checksums agree). */
#ifndef RLT_ITEST_H
#define RLT_ITEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* user + system CPU of this process */
static inline uint64_t cpu_ns(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static inline const char *ename(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : "E?";
}

#define FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t fnv_update(uint64_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The pattern: PAT_LEN pseudo-random bytes, followed by MAX_CALL more of the same, so that any
 * call of up to MAX_CALL bytes at any offset reads one contiguous run. */
#define PAT_LEN 1000003u
#define MAX_CALL (4u << 20)

static inline unsigned char *pattern_make(void)
{
	unsigned char *p = malloc(PAT_LEN + MAX_CALL);
	uint64_t x = 0x9E3779B97F4A7C15ull;

	if (!p) {
		perror("malloc");
		exit(2);
	}
	for (size_t i = 0; i < PAT_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)(x >> 24);
	}
	for (size_t i = 0; i < MAX_CALL; i++)
		p[PAT_LEN + i] = p[i % PAT_LEN];
	return p;
}

#endif
