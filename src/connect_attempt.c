/*
 * connect_attempt.c: telling a connect() that starts a connection attempt from one that asks how
 * an attempt went.
 *
 * Clients that connect without blocking (APR, and so `ab`) learn the outcome by calling connect()
 * again on the same socket: EALREADY while the attempt runs, then 0 or EISCONN, or the error it
 * failed with. Charging each call would halve RLT_CONNECT for them. The kernel's TCP state tells
 * the calls apart: SYN_SENT is an attempt under way and any state but CLOSE a socket that got
 * (or had) its connection, so connect() starts nothing. CLOSE is a socket free to start an
 * attempt, except one whose attempt failed and has not been reported yet: the next connect()
 * reports the failure and starts nothing. That one alone has sent segments: the kernel clears
 * the count when the failure is reported (tcp_disconnect, Linux 5.6). Not the error itself
 * (SO_ERROR): reading it would take it from the program.
 *
 * Both fronts decide here which rules a connect() counts (rlt__connect_counts) and the preload,
 * which sees the result, what it means for the socket (rlt__connect_outcome). A send can be a
 * connect too: TCP Fast Open's sendto or sendmsg with MSG_FASTOPEN and an address, on a stream
 * socket not connected yet, makes the connection and sends its first data in the SYN
 * (rlt__connect_by_send): it is charged as the connect it is.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/tcp.h>

#include "connect_attempt.h"
#include "policy.h"

/* include/net/tcp_states.h; <linux/tcp.h> has no names for them */
#define STATE_CLOSE 7

int rlt__connect_starts(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	int saved = errno, starts;

	memset(&ti, 0, sizeof ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
		/* not TCP (a unix stream socket never says EINPROGRESS): a connected socket
		 * answers EISCONN, any other starts an attempt */
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		starts = getpeername(fd, (struct sockaddr *)&ss, &sl) != 0;
	} else if (ti.tcpi_state != STATE_CLOSE) {
		starts = 0;
	} else if (len < offsetof(struct tcp_info, tcpi_segs_out) + sizeof ti.tcpi_segs_out) {
		starts = 1; /* a kernel older than the count: charged, as a new attempt */
	} else {
		starts = ti.tcpi_segs_out == 0;
	}
	errno = saved;
	return starts;
}

int rlt__connect_by_send(int type, int flags, const struct sockaddr *to, socklen_t tolen,
                         int has_peer)
{
	return type == SOCK_STREAM && (flags & MSG_FASTOPEN) && to &&
	       tolen >= (socklen_t)sizeof(sa_family_t) && to->sa_family != AF_UNSPEC && !has_peer;
}

void rlt__connect_counts(int fd, int type, int asked_before, int holds_slots, uint32_t *cmask,
                         uint32_t *nmask)
{
	if (type != SOCK_STREAM) {
		/* a datagram connect() only sets the peer: no connection to count */
		*cmask = *nmask = 0;
		return;
	}
	/* a second connect() on a socket already counted is not a new connection */
	if (holds_slots)
		*nmask = 0;
	/* connect is no hot path: one system call to tell, and only when it could matter */
	if ((*cmask || *nmask) && asked_before && !rlt__connect_starts(fd))
		*cmask = *nmask = 0;
}

enum rlt__connect_outcome rlt__connect_outcome(int rc, int err)
{
	/* EINTR leaves the attempt going on in the kernel, as EINPROGRESS does */
	if (rc == 0 || err == EINPROGRESS || err == EALREADY || err == EINTR)
		return RLT_CONNECT_GOING;
	/* connected before: this call changed nothing */
	if (err == EISCONN)
		return RLT_CONNECT_CONNECTED;
	return RLT_CONNECT_FAILED;
}
