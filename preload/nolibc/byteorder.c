/*
 * byteorder.c: htons, ntohs, htonl, ntohl. The C library's headers make them inline when the
 * compiler optimises and calls otherwise (a build without -O), so the subset has them too.
 */
#include <netinet/in.h>
#include <stdint.h>

#undef htons
#undef ntohs
#undef htonl
#undef ntohl

uint16_t htons(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

uint16_t ntohs(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

uint32_t htonl(uint32_t v)
{
	return __builtin_bswap32(v);
}

uint32_t ntohl(uint32_t v)
{
	return __builtin_bswap32(v);
}
