/*
 * inet.c: inet_ntop and inet_pton for AF_INET and AF_INET6, with the C library's forms: IPv4
 * as four decimal parts without leading zeros, IPv6 with the longest run of two or more zero
 * groups (the first of equal ones) as "::", and an IPv4 tail for ::ffff:a.b.c.d and ::a.b.c.d.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

/* A text made in `tmp` (n bytes with its NUL) goes to `out` whole, or not at all. */
static int copy_out(const char *tmp, size_t n, char *out, size_t cap)
{
	if (n > cap) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(out, tmp, n);
	return 0;
}

static int put4(const unsigned char *a, char *out, size_t cap)
{
	char tmp[16];
	int n = 0;

	for (int i = 0; i < 4; i++) {
		unsigned v = a[i];
		if (i)
			tmp[n++] = '.';
		if (v >= 100)
			tmp[n++] = (char)('0' + v / 100);
		if (v >= 10)
			tmp[n++] = (char)('0' + v / 10 % 10);
		tmp[n++] = (char)('0' + v % 10);
	}
	tmp[n++] = '\0';
	return copy_out(tmp, (size_t)n, out, cap);
}

static int put6(const unsigned char *a, char *out, size_t cap)
{
	char tmp[48];
	unsigned w[8];
	int best = -1, best_len = 0, n = 0;

	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && w[j] == 0)
			j++;
		if (j - i > best_len && j - i >= 2)
			best = i, best_len = j - i;
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			tmp[n++] = ':';
			if (i == 0)
				tmp[n++] = ':';
			i += best_len - 1;
			continue;
		}
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
			if (put4(a + 12, tmp + n, sizeof tmp - (size_t)n))
				return -1;
			n += (int)strlen(tmp + n);
			break;
		}
		for (int s = 12, lead = 1; s >= 0; s -= 4) {
			unsigned d = w[i] >> s & 15;
			if (lead && d == 0 && s)
				continue;
			lead = 0;
			tmp[n++] = "0123456789abcdef"[d];
		}
		if (i < 7)
			tmp[n++] = ':';
	}
	tmp[n++] = '\0';
	return copy_out(tmp, (size_t)n, out, cap);
}

const char *inet_ntop(int af, const void *restrict src, char *restrict dst, socklen_t cap)
{
	int r;

	if (af == AF_INET)
		r = put4(src, dst, cap);
	else if (af == AF_INET6)
		r = put6(src, dst, cap);
	else {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	return r ? NULL : dst;
}

static int parse4(const char *s, unsigned char *out)
{
	unsigned char a[4];

	for (int i = 0; i < 4; i++) {
		unsigned v = 0;
		int digits = 0;
		if (i && *s++ != '.')
			return 0;
		while (*s >= '0' && *s <= '9') {
			if (digits && v == 0)
				return 0; /* a leading zero */
			v = v * 10 + (unsigned)(*s++ - '0');
			if (v > 255 || ++digits > 3)
				return 0;
		}
		if (!digits)
			return 0;
		a[i] = (unsigned char)v;
	}
	if (*s)
		return 0;
	memcpy(out, a, 4);
	return 1;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int parse6(const char *s, unsigned char *out)
{
	unsigned char a[16] = {0};
	int n = 0, gap = -1; /* bytes filled, where "::" was */

	if (s[0] == ':' && s[1] != ':')
		return 0;
	if (s[0] == ':')
		s++;
	while (*s) {
		if (*s == ':') {
			if (gap >= 0)
				return 0;
			gap = n;
			s++;
			if (!*s)
				break;
		}
		const char *start = s;
		unsigned v = 0;
		int d = 0;
		while (hexval(*s) >= 0 && d < 5)
			v = v << 4 | (unsigned)hexval(*s++), d++;
		if (*s == '.') {
			if (n > 12 || !parse4(start, a + n))
				return 0;
			n += 4;
			break;
		}
		if (d == 0 || d > 4 || n > 14)
			return 0;
		a[n++] = (unsigned char)(v >> 8);
		a[n++] = (unsigned char)v;
		if (*s == ':') {
			s++;
			if (!*s)
				return 0; /* a trailing single ':' */
		} else if (*s) {
			return 0;
		}
	}
	if (gap >= 0) {
		if (n == 16)
			return 0;
		memmove(a + 16 - (n - gap), a + gap, (size_t)(n - gap));
		memset(a + gap, 0, (size_t)(16 - n));
	} else if (n != 16) {
		return 0;
	}
	memcpy(out, a, 16);
	return 1;
}

int inet_pton(int af, const char *restrict src, void *restrict dst)
{
	if (af == AF_INET)
		return parse4(src, dst);
	if (af == AF_INET6)
		return parse6(src, dst);
	errno = EAFNOSUPPORT;
	return -1;
}

