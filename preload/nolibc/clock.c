/*
 * clock.c: clock_gettime through the vDSO (no system call: the hot path reads the clock once
 * per call), found in the image the kernel maps at AT_SYSINFO_EHDR; the raw system call when
 * there is none.
 */
#include <elf.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "rawsys.h"
#include "start.h"

/* the vDSO's signature (arch/x86/entry/vdso/vclock_gettime.c): an int, 0 or -errno */
typedef int (*vdso_gettime_t)(clockid_t, struct timespec *);
static vdso_gettime_t vdso_gettime;

/* The vDSO is a whole ELF image, its section headers included: its dynamic symbols are in
 * the SHT_DYNSYM section, the names in the section it links to. */
void *rlt_trap_vdso_sym(const void *image, const char *name)
{
	const unsigned char *base = image;
	const Elf64_Ehdr *eh = image;
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	long bias = 0;
	int have_load = 0;

	if (!image || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && !have_load) {
			bias = (long)((uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr);
			have_load = 1;
		}
	if (!have_load || !eh->e_shoff)
		return NULL;
	sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || !sh[i].sh_entsize || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
		const char *str = (const char *)(base + sh[sh[i].sh_link].sh_offset);
		size_t n = sh[i].sh_size / sh[i].sh_entsize;
		for (size_t j = 0; j < n; j++)
			if (sym[j].st_name && sym[j].st_shndx != SHN_UNDEF &&
			    ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC && !strcmp(str + sym[j].st_name, name))
				return (void *)(bias + (long)sym[j].st_value);
	}
	return NULL;
}

void rlt_trap_clock_init(const void *vdso)
{
	vdso_gettime = (vdso_gettime_t)rlt_trap_vdso_sym(vdso, "__vdso_clock_gettime");
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	vdso_gettime_t f = vdso_gettime;
	/* the vDSO hands back what its fallback system call returned: 0 or -errno */
	return (int)rlt_trap_ret(f ? (long)f(clk, ts) : RLT_SYS2(SYS_clock_gettime, clk, ts));
}
