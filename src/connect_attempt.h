/*
 * connect_attempt.h: what a connect() counts and what its result means, for both fronts; a
 * send that is a connect (TCP Fast Open).
 */
#ifndef RLT_CONNECT_ATTEMPT_H
#define RLT_CONNECT_ATTEMPT_H

#include <stdint.h>
#include <sys/socket.h>

/* 1 when a connect() now on fd, a stream socket that has seen one before,
 * would start a connection attempt (RLT_CONNECT and RLT_CONNS count it); 0 when it would only
 * report how the last one went (EALREADY, EISCONN, 0 or its error). Keeps errno. */
int rlt__connect_starts(int fd);

/*
 * Which rules a connect() on fd (a socket of `type`) counts, given *cmask (RLT_CONNECT) and
 * *nmask (RLT_CONNS) as matched for its peer; both are cut to what it counts. A datagram
 * socket counts nothing; one that holds its RLT_CONNS slots already takes none again; and a
 * connect() that only asks how an attempt went counts nothing (rlt__connect_starts, asked only
 * when asked_before: a front that knows this is the socket's first connect() saves the call).
 */
void rlt__connect_counts(int fd, int type, int asked_before, int holds_slots, uint32_t *cmask,
                         uint32_t *nmask);

/* 1 when a send is a connect: TCP Fast Open (MSG_FASTOPEN in flags, an
 * address `to`) on a stream socket (`type`) that has no peer yet. Charged as a connect (and its
 * result read as a connect()'s, rlt__connect_outcome of 0 or -1), then as a send to that peer. */
int rlt__connect_by_send(int type, int flags, const struct sockaddr *to, socklen_t tolen,
                         int has_peer);

/* What a connect()'s result (rc, and errno err when rc is -1) means for its socket. */
enum rlt__connect_outcome {
	RLT_CONNECT_GOING,     /* connected, or an attempt goes on: it holds its RLT_CONNS slots */
	RLT_CONNECT_CONNECTED, /* EISCONN: connected before, nothing changed */
	RLT_CONNECT_FAILED,    /* the attempt failed and the program knows: the next connect()
	                          starts another; its slots go back */
};
enum rlt__connect_outcome rlt__connect_outcome(int rc, int err);

#endif
