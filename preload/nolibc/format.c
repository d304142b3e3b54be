/*
 * format.c: snprintf and vsnprintf for the formats the core and the hooks use: flags - 0 + space
 * #, a width and a precision (digits or *), the lengths hh h l ll z j t L, and d i u o x X c s p
 * % f e g (F E G). Floating point (only %.9g in scope_shm.c's mismatch message) goes through
 * long double: its digits are right to 18 significant places, which is all a double has; past
 * that, and for %f of numbers at or above 1e19, the last digits may differ from glibc's exact
 * expansion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct out {
	char *buf;
	size_t cap; /* bytes of buf, the NUL included */
	size_t n;   /* bytes the whole result needs, written or not */
};

static void put(struct out *o, char c)
{
	if (o->n + 1 < o->cap)
		o->buf[o->n] = c;
	o->n++;
}

static void puts_n(struct out *o, const char *s, size_t n)
{
	while (n--)
		put(o, *s++);
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

enum { F_LEFT = 1, F_ZERO = 2, F_PLUS = 4, F_SPACE = 8, F_ALT = 16 };

struct spec {
	int flags;
	int width;
	int prec; /* -1: none */
	char conv;
};

/* prefix (sign, 0x), then zeros, then body, padded to the width. */
static void emit(struct out *o, const struct spec *sp, const char *prefix, int zeros,
                 const char *body, size_t blen, int zero_pad)
{
	int plen = (int)strlen(prefix);
	int len = plen + zeros + (int)blen;
	int fill = sp->width > len ? sp->width - len : 0;

	if (!(sp->flags & F_LEFT) && !zero_pad)
		pad(o, ' ', fill);
	puts_n(o, prefix, (size_t)plen);
	if (!(sp->flags & F_LEFT) && zero_pad)
		pad(o, '0', fill);
	pad(o, '0', zeros);
	puts_n(o, body, blen);
	if (sp->flags & F_LEFT)
		pad(o, ' ', fill);
}

static void fmt_int(struct out *o, const struct spec *sp, unsigned long long v, int neg)
{
	char digits[24], prefix[4] = "";
	const char *set = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned base = sp->conv == 'o' ? 8 : (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16 : 10;
	int n = 0, zeros, nonzero = v != 0;

	while (v) {
		digits[sizeof digits - 1 - n++] = set[v % base];
		v /= base;
	}
	if (n == 0 && sp->prec != 0)
		digits[sizeof digits - 1 - n++] = '0';
	if (neg)
		strcpy(prefix, "-");
	else if (sp->flags & F_PLUS && (sp->conv == 'd' || sp->conv == 'i'))
		strcpy(prefix, "+");
	else if (sp->flags & F_SPACE && (sp->conv == 'd' || sp->conv == 'i'))
		strcpy(prefix, " ");
	if (sp->conv == 'p' || (sp->flags & F_ALT && base == 16 && nonzero))
		strcpy(prefix, sp->conv == 'X' ? "0X" : "0x");
	zeros = sp->prec > n ? sp->prec - n : 0;
	if (sp->flags & F_ALT && base == 8 && zeros == 0 && (n == 0 || digits[sizeof digits - n] != '0'))
		zeros = 1;
	emit(o, sp, prefix, zeros, digits + sizeof digits - n, (size_t)n,
	     (sp->flags & F_ZERO) && sp->prec < 0);
}

/* ----- floating point ----- */

static long double p10(int k)
{
	long double r = 1, b = 10;
	unsigned u = (unsigned)(k < 0 ? -k : k);

	for (; u; u >>= 1, b *= b)
		if (u & 1)
			r *= b;
	return k < 0 ? 1 / r : r;
}

/* The decimal exponent of x > 0 before any rounding: 10^k <= x < 10^(k+1). */
static int dec_exp(long double x)
{
	int k = 0;

	while (x >= 10)
		x /= 10, k++;
	while (x < 1)
		x *= 10, k--;
	return k;
}

/* x > 0 to p significant digits (1..18): returns them as an integer of exactly p digits and
 * sets *e, the decimal exponent of the first (one more than dec_exp when rounding carried). */
static unsigned long long sig_digits(long double x, int p, int *e)
{
	unsigned long long n = 0, lo = 1;
	int k = dec_exp(x);

	for (int i = 1; i < p; i++)
		lo *= 10;
	for (int tries = 0; tries < 4; tries++) {
		long double y = x * p10(p - 1 - k), frac;
		n = (unsigned long long)y;
		frac = y - (long double)n;
		if (frac > 0.5L || (frac == 0.5L && (n & 1)))
			n++;
		if (n >= lo * 10)
			k++;
		else if (n < lo)
			k--;
		else
			break;
	}
	*e = k;
	return n;
}

/* Never inlined: its long double frame (some 900 bytes) is for %g alone, not for every call
 * on the handler's stack. */
static void fmt_float(struct out *o, const struct spec *sp, double v) __attribute__((noinline));
static void fmt_float(struct out *o, const struct spec *sp, double v)
{
	char body[700], prefix[2] = "";
	int upper = sp->conv == 'E' || sp->conv == 'F' || sp->conv == 'G';
	char c = (char)(sp->conv | 0x20); /* e, f or g */
	int prec = sp->prec < 0 ? 6 : sp->prec, e = 0, style_e, fracd;
	size_t n = 0;
	long double x = v;
	char d[20];
	int nd;

	if (v < 0 || (v == 0 && 1 / v < 0)) {
		prefix[0] = '-';
		x = -x;
	} else if (sp->flags & F_PLUS) {
		prefix[0] = '+';
	} else if (sp->flags & F_SPACE) {
		prefix[0] = ' ';
	}
	if (v != v || x > 1.8e308L) {
		emit(o, sp, prefix, 0, v != v ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), 3, 0);
		return;
	}
	if (prec > 300)
		prec = 300;
	if (c == 'g' && prec == 0)
		prec = 1;
	/* the significant digits this conversion shows, at most 18 computed */
	if (c == 'f') {
		nd = (x != 0 ? dec_exp(x) : 0) + 1 + prec;
	} else {
		nd = c == 'e' ? prec + 1 : prec;
	}
	if (x == 0 || nd <= 0) {
		/* nothing shown but zeros, or one unit in the last place when x rounds up to it */
		long double half = p10(-prec) / 2;
		memset(d, '0', sizeof d);
		nd = 1;
		e = 0;
		if (x != 0 && c == 'f' && x > half) {
			d[0] = '1';
			e = -prec;
		}
	} else {
		int take = nd > 18 ? 18 : nd;
		unsigned long long digits = sig_digits(x, take, &e);
		for (int i = take - 1; i >= 0; i--, digits /= 10)
			d[i] = (char)('0' + digits % 10);
		nd = take;
	}
	/* digit i (0-based) of the number, zero past those computed */
#define DIG(i) ((i) >= 0 && (i) < nd ? d[i] : '0')
	style_e = c == 'e' || (c == 'g' && (e < -4 || e >= prec));
	if (style_e) {
		fracd = c == 'g' ? prec - 1 : prec;
		body[n++] = DIG(0);
		if (fracd || (sp->flags & F_ALT))
			body[n++] = '.';
		for (int i = 1; i <= fracd; i++)
			body[n++] = DIG(i);
	} else {
		fracd = c == 'g' ? prec - 1 - e : prec;
		if (e < 0) {
			body[n++] = '0';
		} else {
			for (int i = 0; i <= e; i++)
				body[n++] = DIG(i);
		}
		if (fracd || (sp->flags & F_ALT))
			body[n++] = '.';
		for (int i = 1; i <= fracd; i++)
			body[n++] = DIG(e + i);
	}
#undef DIG
	if (c == 'g' && !(sp->flags & F_ALT) && memchr(body, '.', n)) {
		while (body[n - 1] == '0')
			n--;
		if (body[n - 1] == '.')
			n--;
	}
	if (style_e) {
		unsigned ae = (unsigned)(e < 0 ? -e : e);
		body[n++] = upper ? 'E' : 'e';
		body[n++] = e < 0 ? '-' : '+';
		if (ae >= 100)
			body[n++] = (char)('0' + ae / 100);
		body[n++] = (char)('0' + ae / 10 % 10);
		body[n++] = (char)('0' + ae % 10);
	}
	emit(o, sp, prefix, 0, body, n, (sp->flags & F_ZERO) != 0);
}

/* ----- the format ----- */

static int number(const char **f)
{
	int v = 0;

	while (**f >= '0' && **f <= '9')
		v = v * 10 + *(*f)++ - '0';
	return v;
}

/* The flags, width, precision and length of a conversion, f just past its '%': f is left on the
 * conversion character (sp->conv), and the length returned ('H' hh, 'h', 'l', 'q' ll,
 * 'z' size_t, 'L' long double, 0 none). A width or precision of * is taken from ap. */
static int parse_spec(const char **pf, va_list *ap, struct spec *sp)
{
	const char *f = *pf;
	int len = 0;

	for (;; f++) {
		int fl = *f == '-' ? F_LEFT : *f == '0' ? F_ZERO : *f == '+' ? F_PLUS
		         : *f == ' ' ? F_SPACE : *f == '#' ? F_ALT : 0;
		if (!fl)
			break;
		sp->flags |= fl;
	}
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		if (sp->width < 0) {
			sp->flags |= F_LEFT;
			sp->width = -sp->width;
		}
		f++;
	} else {
		sp->width = number(&f);
	}
	if (*f == '.') {
		f++;
		if (*f == '*') {
			sp->prec = va_arg(*ap, int);
			if (sp->prec < 0)
				sp->prec = -1;
			f++;
		} else {
			sp->prec = number(&f);
		}
	}
	if (*f == 'h')
		len = *++f == 'h' ? (f++, 'H') : 'h';
	else if (*f == 'l')
		len = *++f == 'l' ? (f++, 'q') : 'l';
	else if (*f == 'z' || *f == 'j' || *f == 't')
		len = 'z', f++;
	else if (*f == 'L')
		len = 'L', f++;
	sp->conv = *f;
	*pf = f;
	return len;
}

/* One conversion (sp->conv, of length len), its argument taken from ap. */
static void convert(struct out *o, struct spec *sp, int len, va_list *ap)
{
	switch (sp->conv) {
	case 'd':
	case 'i': {
		long long v = len == 'q' || len == 'z' || len == 'l' ? (len == 'q' ? va_arg(*ap, long long)
		                                                                    : va_arg(*ap, long))
		                                                     : va_arg(*ap, int);
		if (len == 'h')
			v = (short)v;
		else if (len == 'H')
			v = (signed char)v;
		fmt_int(o, sp, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v, v < 0);
		break;
	}
	case 'u':
	case 'o':
	case 'x':
	case 'X': {
		unsigned long long v = len == 'q' ? va_arg(*ap, unsigned long long)
		                       : len == 'l' || len == 'z' ? va_arg(*ap, unsigned long)
		                                                  : va_arg(*ap, unsigned);
		if (len == 'h')
			v = (unsigned short)v;
		else if (len == 'H')
			v = (unsigned char)v;
		fmt_int(o, sp, v, 0);
		break;
	}
	case 'p': {
		void *p = va_arg(*ap, void *);
		if (!p) {
			sp->prec = -1;
			emit(o, sp, "", 0, "(nil)", 5, 0);
		} else {
			fmt_int(o, sp, (uintptr_t)p, 0);
		}
		break;
	}
	case 'c': {
		char ch = (char)va_arg(*ap, int);
		emit(o, sp, "", 0, &ch, 1, 0);
		break;
	}
	case 's': {
		const char *s = va_arg(*ap, const char *);
		if (!s)
			s = sp->prec < 0 || sp->prec >= 6 ? "(null)" : "";
		emit(o, sp, "", 0, s, sp->prec < 0 ? strlen(s) : strnlen(s, (size_t)sp->prec), 0);
		break;
	}
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
		fmt_float(o, sp, len == 'L' ? (double)va_arg(*ap, long double) : va_arg(*ap, double));
		break;
	case '%':
		put(o, '%');
		break;
	default: /* not a conversion we know: shown as written */
		put(o, '%');
		put(o, sp->conv);
		break;
	}
}

int vsnprintf(char *restrict buf, size_t cap, const char *restrict fmt, va_list ap)
{
	struct out o = {buf, cap, 0};
	const char *f = fmt;
	va_list args; /* a copy: ap may be an array, which cannot be passed by address */

	va_copy(args, ap);
	while (*f) {
		struct spec sp = {0, 0, -1, 0};
		int len;

		if (*f != '%') {
			put(&o, *f++);
			continue;
		}
		f++;
		len = parse_spec(&f, &args, &sp);
		if (!*f)
			break;
		f++;
		convert(&o, &sp, len, &args);
	}
	va_end(args);
	if (cap)
		buf[o.n < cap ? o.n : cap - 1] = '\0';
	return o.n > INT32_MAX ? -1 : (int)o.n;
}

int snprintf(char *restrict buf, size_t cap, const char *restrict f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, cap, f, ap);
	va_end(ap);
	return n;
}
