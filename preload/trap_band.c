/*
 * trap_band.c: sockets live at fds from the band up (trap_filter.c in the launcher traps
 * read, write and their kin only there).
 *
 * A socket is moved with F_DUPFD and a close, never dup3, which would close whatever another
 * thread holds at the target. A program whose fds reach the band has files in it: correct,
 * only slower. A socket the program copies below the band itself (inetd style) still traps on
 * send and receive, but not on read and write: it is said once.
 */
#include <fcntl.h>
#include <unistd.h>

#include "preload.h"
#include "trap.h"

int rlt_trap_band = RLT_TRAP_BAND;
static _Atomic int full_said;

int rlt_trap_to_band(int fd, int cloexec)
{
	int nfd, saved;

	if (fd >= rlt_trap_band)
		return fd;
	saved = rlt_trap_self()->err;
	nfd = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, rlt_trap_band);
	if (nfd < 0) {
		/* the band is full: the socket works where it is, its reads and writes untrapped */
		if (!atomic_exchange(&full_said, 1))
			rlt_pre_log(RLT_LOG_WARN, "no fd free from %d up: a socket stays at %d, where "
			                          "read() and write() on it are not throttled",
			            rlt_trap_band, fd);
		rlt_trap_self()->err = saved;
		return fd;
	}
	close(fd);
	rlt_trap_self()->err = saved;
	return nfd;
}
