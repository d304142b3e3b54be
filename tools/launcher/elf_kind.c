/*
 * elf_kind.c: is the command a static binary? One with no program interpreter (PT_INTERP)
 * loads no preload, so the launcher gives it the system-call front (rlthrottle(1)).
 */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_kind.h"

/* The file execvp would run: cmd itself when it has a slash, else the first executable match
 * in PATH. */
static int resolve(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		if (strlen(cmd) >= len)
			return -1;
		strcpy(out, cmd);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		const char *dir = n ? path : ".";
		size_t dn = n ? n : 1;
		if (dn + 1 + strlen(cmd) < len) {
			memcpy(out, dir, dn);
			out[dn] = '/';
			strcpy(out + dn + 1, cmd);
			if (access(out, X_OK) == 0)
				return 0;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return -1;
}

int rlt_cli_is_static(const char *cmd)
{
	char file[PATH_MAX];
	Elf64_Ehdr eh;
	int fd, found = 0;

	if (resolve(cmd, file, sizeof file) != 0 || (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		close(fd);
		return 0;
	}
	for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			break;
		if (ph.p_type == PT_INTERP) {
			found = 1;
			break;
		}
	}
	close(fd);
	/* a shared library with no interpreter is not a program: exec will say so */
	return !found && (eh.e_type == ET_EXEC || eh.e_entry != 0);
}
