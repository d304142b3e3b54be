/*
 * errstr.c: strerror, the texts of the errors the core's messages name (opening and mapping a segment,
 * a page, a directory), worded as glibc words them; any other number reads "Unknown error".
 */
#include <errno.h>
#include <string.h>

static const struct {
	int e;
	const char *text;
} texts[] = {
	{0, "Success"},
	{EPERM, "Operation not permitted"},
	{ENOENT, "No such file or directory"},
	{ESRCH, "No such process"},
	{EINTR, "Interrupted system call"},
	{EIO, "Input/output error"},
	{EBADF, "Bad file descriptor"},
	{EAGAIN, "Resource temporarily unavailable"},
	{ENOMEM, "Cannot allocate memory"},
	{EACCES, "Permission denied"},
	{EFAULT, "Bad address"},
	{EBUSY, "Device or resource busy"},
	{EEXIST, "File exists"},
	{ENOTDIR, "Not a directory"},
	{EISDIR, "Is a directory"},
	{EINVAL, "Invalid argument"},
	{ENFILE, "Too many open files in system"},
	{EMFILE, "Too many open files"},
	{EFBIG, "File too large"},
	{ENOSPC, "No space left on device"},
	{EROFS, "Read-only file system"},
	{ERANGE, "Numerical result out of range"},
	{EDEADLK, "Resource deadlock avoided"},
	{ENAMETOOLONG, "File name too long"},
	{ENOSYS, "Function not implemented"},
	{ELOOP, "Too many levels of symbolic links"},
	{EOVERFLOW, "Value too large for defined data type"},
	{ENOTSOCK, "Socket operation on non-socket"},
	{EAFNOSUPPORT, "Address family not supported by protocol"},
	{EADDRINUSE, "Address already in use"},
	{ENETUNREACH, "Network is unreachable"},
	{ECONNRESET, "Connection reset by peer"},
	{ENOTCONN, "Transport endpoint is not connected"},
	{ETIMEDOUT, "Connection timed out"},
	{ECONNREFUSED, "Connection refused"},
	{EHOSTUNREACH, "No route to host"},
	{EOWNERDEAD, "Owner died"},
	{ENOTRECOVERABLE, "State not recoverable"},
};

char *strerror(int e)
{
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		if (texts[i].e == e)
			return (char *)texts[i].text;
	return (char *)"Unknown error";
}
