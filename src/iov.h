/* iov.h: a byte range of a scattered buffer, as the hooks' pieces of a vectored call need
 * it. */
#ifndef RLT_IOV_H
#define RLT_IOV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Fills out[0..max) with the part [off, off + len) of iov[0..cnt); returns how many entries
 * it used and sets *missing to the bytes of the range that iov did not have (or that did not
 * fit in max entries). */
size_t rlt__iov_slice(const struct iovec *iov, size_t cnt, uint64_t off, size_t len,
                      struct iovec *out, size_t max, size_t *missing);

#endif
