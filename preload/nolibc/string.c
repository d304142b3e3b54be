/*
 * string.c: the mem* and str* functions the core and the hooks call (and those the compiler
 * emits on its own: memcpy, memmove, memset, memcmp, bcmp). Byte loops: they run at load and on
 * short strings; the hot path's copies are small and inlined by the compiler.
 */
#include <string.h>
#include <strings.h>

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	unsigned char *o = d;
	const unsigned char *i = s;

	while (n--)
		*o++ = *i++;
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *o = d;
	const unsigned char *i = s;

	if (o == i || !n)
		return d;
	if (o < i) {
		while (n--)
			*o++ = *i++;
	} else {
		while (n--)
			o[n] = i[n];
	}
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *o = d;

	while (n--)
		*o++ = (unsigned char)c;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

/* clang calls it for a memcmp whose result is only compared with 0 */
int bcmp(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n);
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++)
		if (*a != *b || !*a)
			return (unsigned char)*a - (unsigned char)*b;
	return 0;
}

char *strcpy(char *restrict d, const char *restrict s)
{
	char *o = d;

	while ((*o++ = *s++))
		;
	return d;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	for (;; s++) {
		if (*s == (char)c)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

size_t strspn(const char *s, const char *accept)
{
	size_t n = 0;

	while (s[n] && strchr(accept, s[n]))
		n++;
	return n;
}

size_t strcspn(const char *s, const char *reject)
{
	size_t n = 0;

	while (s[n] && !strchr(reject, s[n]))
		n++;
	return n;
}

char *strstr(const char *h, const char *n)
{
	size_t ln = strlen(n);

	for (; *h; h++)
		if (!strncmp(h, n, ln))
			return (char *)h;
	return ln ? NULL : (char *)h;
}
