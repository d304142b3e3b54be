/* iov.c: see iov.h. */
#include "iov.h"

size_t rlt__iov_slice(const struct iovec *iov, size_t cnt, uint64_t off, size_t len,
                      struct iovec *out, size_t max, size_t *missing)
{
	size_t n = 0;

	for (size_t i = 0; i < cnt && len && n < max; i++) {
		size_t l = iov[i].iov_len;
		if (off >= l) {
			off -= l;
			continue;
		}
		size_t take = l - off < len ? l - off : len;
		out[n].iov_base = (char *)iov[i].iov_base + off;
		out[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	*missing = len;
	return n;
}
