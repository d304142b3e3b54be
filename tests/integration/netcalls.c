/* netcalls CALL COND: one call family under one network condition (rlthrottle(7) NETWORK
 * CONDITIONS), on a connected pair on loopback: the sender bound to 127.0.0.2, the receiver
 * on 127.0.0.1, so that a condition with peer=127.0.0.1 is the sender's alone and one with
 * peer=127.0.0.2 the receiver's (test_net_calls.sh). CALL is the call under test: a send
 * (send sendto sendmsg sendmmsg write writev pwritev2 sendfile fwrite) made on the sender, or
 * a receive (recv recvfrom recvmsg recvmmsg read readv preadv2 read_chk recv_chk recvfrom_chk
 * fread, poll: a poll for POLLIN, then a recv) made on the receiver; the other end uses plain send and recv. COND says what is done:
 *   latency  TCP: 10 bytes sent, one receive of up to 10: ms from the send to its return
 *   slice    TCP: a send of 10 bytes (ms it took), or one receive of up to 16 after 10 came
 *   hang     TCP: one call with SO_SNDTIMEO / SO_RCVTIMEO 300 ms (10 bytes sent first)
 *   reset    TCP: up to 4 calls moving what is left of 10 bytes: bytes moved, the last errno
 *   loss     UDP: one datagram of 10 bytes: what the send said and what the receiver got
 *            (a receive with SO_RCVTIMEO 300 ms)
 *   ulatency UDP: as latency, one datagram
 *   uloss    UDP: as loss, the receiver unconnected
 *   ulatency_open UDP: as ulatency, the receiver unconnected
 * A call named NAME_nowait (preadv2_nowait, pwritev2_nowait) is NAME with RWF_NOWAIT.
 * Prints "call=C cond=K ret=R moved=M got=G ms=T err=E" (ret: the call's first result; moved:
 * what the calls under test moved; got: what the other end received, -1 when nothing). */
#include <fcntl.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/uio.h>

#include "itest.h"

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
                       struct sockaddr *from, socklen_t *fromlen);

/* udp_open: the receiver of a datagram pair stays unconnected (its datagrams matched one by one) */
static int pair(int stream, int udp_open, int *s, int *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in b = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002)};
	socklen_t al = sizeof a, bl = sizeof b;
	int type = stream ? SOCK_STREAM : SOCK_DGRAM;
	int l = socket(AF_INET, type, 0);

	*s = socket(AF_INET, type, 0);
	*r = l;
	if (l < 0 || *s < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0 ||
	    bind(*s, (struct sockaddr *)&b, sizeof b) != 0 ||
	    getsockname(*s, (struct sockaddr *)&b, &bl) != 0 || (stream && listen(l, 1) != 0) ||
	    connect(*s, (struct sockaddr *)&a, sizeof a) != 0 ||
	    (stream ? (*r = accept(l, NULL, NULL)) < 0
	            : !udp_open && connect(l, (struct sockaddr *)&b, sizeof b) != 0)) {
		perror("netcalls: pair");
		return -1;
	}
	return 0;
}

/* A batch call of one message as a plain call's result: its length, -1, or 0. */
static ssize_t one_of(int n, const struct mmsghdr *m)
{
	return n == 1 ? (ssize_t)m->msg_len : n < 0 ? -1 : 0;
}

/* RWF_NOWAIT for a call named ..._nowait. */
static int nowait(const char *call)
{
	return strstr(call, "_nowait") ? RWF_NOWAIT : 0;
}

static ssize_t do_send(const char *call, int fd, const char *buf, size_t len)
{
	struct iovec v = {(void *)buf, len};
	struct msghdr h = {.msg_iov = &v, .msg_iovlen = 1};

	if (!strcmp(call, "send"))
		return send(fd, buf, len, 0);
	if (!strcmp(call, "sendto"))
		return sendto(fd, buf, len, 0, NULL, 0);
	if (!strcmp(call, "sendmsg"))
		return sendmsg(fd, &h, 0);
	if (!strcmp(call, "sendmmsg")) {
		struct mmsghdr m = {.msg_hdr = h};
		return one_of(sendmmsg(fd, &m, 1, 0), &m);
	}
	if (!strcmp(call, "write"))
		return write(fd, buf, len);
	if (!strcmp(call, "writev"))
		return writev(fd, &v, 1);
	if (!strncmp(call, "pwritev2", 8)) /* pwritev2, pwritev2_nowait */
		return pwritev2(fd, &v, 1, -1, nowait(call));
	if (!strcmp(call, "sendfile")) {
		static int file = -1;
		if (file < 0) { /* a file holding what is to be sent */
			char path[] = "/tmp/netcalls.XXXXXX";
			file = mkstemp(path);
			if (file < 0 || unlink(path) != 0 || write(file, buf, len) != (ssize_t)len)
				return -1;
		}
		if (lseek(file, 0, SEEK_SET) != 0)
			return -1;
		return sendfile(fd, file, NULL, len);
	}
	if (!strcmp(call, "fwrite")) {
		static FILE *f;
		if (!f && !(f = fdopen(fd, "w")))
			return -1;
		size_t n = fwrite(buf, 1, len, f);
		if (fflush(f) != 0)
			return -1;
		return (ssize_t)n;
	}
	fprintf(stderr, "netcalls: no send call %s\n", call);
	exit(2);
}

static ssize_t do_recv(const char *call, int fd, char *buf, size_t len)
{
	struct iovec v = {buf, len};
	struct msghdr h = {.msg_iov = &v, .msg_iovlen = 1};
	struct sockaddr_storage from;
	socklen_t fl = sizeof from;

	if (!strcmp(call, "recv"))
		return recv(fd, buf, len, 0);
	if (!strcmp(call, "poll")) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 2000) != 1)
			return -1;
		return recv(fd, buf, len, MSG_DONTWAIT);
	}
	if (!strcmp(call, "recvfrom"))
		return recvfrom(fd, buf, len, 0, (struct sockaddr *)&from, &fl);
	if (!strcmp(call, "recvmsg"))
		return recvmsg(fd, &h, 0);
	if (!strcmp(call, "recvmmsg")) {
		struct mmsghdr m = {.msg_hdr = h};
		return one_of(recvmmsg(fd, &m, 1, 0, NULL), &m);
	}
	if (!strcmp(call, "read"))
		return read(fd, buf, len);
	if (!strcmp(call, "readv"))
		return readv(fd, &v, 1);
	if (!strncmp(call, "preadv2", 7)) /* preadv2, preadv2_nowait */
		return preadv2(fd, &v, 1, -1, nowait(call));
	/* what -O2 -D_FORTIFY_SOURCE=2 makes of read, recv and recvfrom */
	if (!strcmp(call, "read_chk"))
		return __read_chk(fd, buf, len, len);
	if (!strcmp(call, "recv_chk"))
		return __recv_chk(fd, buf, len, len, 0);
	if (!strcmp(call, "recvfrom_chk"))
		return __recvfrom_chk(fd, buf, len, len, 0, (struct sockaddr *)&from, &fl);
	if (!strcmp(call, "fread")) {
		static FILE *f;
		if (!f && !(f = fdopen(fd, "r")))
			return -1;
		size_t n = fread(buf, 1, len, f);
		return n ? (ssize_t)n : ferror(f) ? -1 : 0;
	}
	fprintf(stderr, "netcalls: no receive call %s\n", call);
	exit(2);
}

static int is_send(const char *call)
{
	static const char *const sends[] = {"send",   "sendto",   "sendmsg",  "sendmmsg", "write",
	                                    "writev", "pwritev2", "sendfile", "fwrite", "pwritev2_nowait"};
	for (size_t i = 0; i < sizeof sends / sizeof *sends; i++)
		if (!strcmp(call, sends[i]))
			return 1;
	return 0;
}

static void timeo(int fd, int name, long ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	if (setsockopt(fd, SOL_SOCKET, name, &tv, sizeof tv) != 0)
		perror("netcalls: setsockopt");
}

/* What the other end received within ms (-1: nothing). */
static long drain(int fd, long want, long ms)
{
	char b[64];
	long got = -1;

	timeo(fd, SO_RCVTIMEO, ms);
	for (int i = 0; i < 64 && got < want; i++) {
		ssize_t n = recv(fd, b, sizeof b, 0);
		if (n <= 0)
			break;
		got = (got < 0 ? 0 : got) + n;
	}
	return got;
}

int main(int argc, char **argv)
{
	static const char data[] = "abcdefghij";
	char buf[16];
	int s, r, err = 0;
	ssize_t ret = 0;
	long moved = 0, got = -1;

	if (argc != 3) {
		fprintf(stderr, "usage: netcalls CALL latency|slice|hang|reset|loss\n");
		return 2;
	}
	const char *call = argv[1], *cond = argv[2];
	int uloss = !strcmp(cond, "uloss"), uopen = uloss || !strcmp(cond, "ulatency_open");
	int out = is_send(call), loss = !strcmp(cond, "loss") || uloss;
	int late = !strcmp(cond, "latency") || !strncmp(cond, "ulatency", 8);
	if (pair(!loss && strncmp(cond, "ulatency", 8), uopen, &s, &r) != 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	uint64_t t0 = now_ns();
	if (out) {
		if (!strcmp(cond, "hang"))
			timeo(s, SO_SNDTIMEO, 300);
		int calls = !strcmp(cond, "reset") ? 4 : 1;
		for (int i = 0; i < calls && moved < 10; i++) {
			errno = 0;
			ssize_t n = do_send(call, s, data + moved, (size_t)(10 - moved));
			err = n < 0 ? errno : 0;
			if (!i)
				ret = n;
			if (n <= 0)
				break;
			moved += n;
		}
	} else {
		if (send(s, data, 10, 0) != 10) {
			perror("netcalls: send");
			return 1;
		}
		if (late)
			t0 = now_ns();
		else
			usleep(50000); /* all of it is there */
		if (!strcmp(cond, "hang") || loss)
			timeo(r, SO_RCVTIMEO, 300);
		int calls = !strcmp(cond, "reset") ? 4 : 1;
		uint64_t t1 = now_ns();
		for (int i = 0; i < calls && moved < 10; i++) {
			errno = 0;
			ssize_t n = do_recv(call, r, buf, !strcmp(cond, "slice") && strcmp(call, "fread") ? sizeof buf : 10 - (size_t)moved);
			err = n < 0 ? errno : 0;
			if (!i)
				ret = n;
			if (n <= 0)
				break;
			moved += n;
		}
		if (!late)
			t0 = t1;
	}
	long ms = (long)((now_ns() - t0) / 1000000u);
	if (out)
		got = drain(r, 10, loss ? 200 : 1000);
	printf("call=%s cond=%s ret=%ld moved=%ld got=%ld ms=%ld err=%s\n", call, cond, (long)ret,
	       moved, got, ms, err ? ename(err) : "0");
	return 0;
}
