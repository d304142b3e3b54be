/* test_inject_blob.c: the injector's checks of a handler blob (tools/launcher/inject_image.c,
 * rlt_cli_inject_check_blob): what it maps must be a static x86-64 ET_EXEC whose segments lie in
 * the window of src/inject_proto.h and whose entry is in its code; anything else is refused
 * with a message that says which. */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "testutil.h"
#include "inject_image.h"
#include "inject_proto.h"

/* A blob of two segments: code at the window's start (the entry), data after it. */
static struct {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3];
	unsigned char body[64];
} b;

static void make(void)
{
	memset(&b, 0, sizeof b);
	memcpy(b.eh.e_ident, ELFMAG, SELFMAG);
	b.eh.e_ident[EI_CLASS] = ELFCLASS64;
	b.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	b.eh.e_type = ET_EXEC;
	b.eh.e_machine = EM_X86_64;
	b.eh.e_entry = RLT_INJECT_BASE + 0x1000;
	b.eh.e_phoff = offsetof(__typeof__(b), ph);
	b.eh.e_phentsize = sizeof(Elf64_Phdr);
	b.eh.e_phnum = 2;
	b.ph[0] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
	                       .p_offset = offsetof(__typeof__(b), body),
	                       .p_vaddr = RLT_INJECT_BASE + 0x1000, .p_filesz = 32, .p_memsz = 32};
	b.ph[1] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W,
	                       .p_offset = offsetof(__typeof__(b), body) + 32,
	                       .p_vaddr = RLT_INJECT_BASE + 0x2000, .p_filesz = 32, .p_memsz = 4096};
}

static void refused(const char *part)
{
	struct rlt_cli_inject_err err;

	assert_int_equal(rlt_cli_inject_check_blob((const void *)&b, sizeof b, &err), -1);
	assert_int_equal(err.code, -ENOEXEC);
	if (!strstr(err.msg, part))
		fail_msg("message '%s' does not say '%s'", err.msg, part);
}

static void a_good_blob_passes(void **s)
{
	struct rlt_cli_inject_err err;
	(void)s;
	make();
	assert_int_equal(rlt_cli_inject_check_blob((const void *)&b, sizeof b, &err), 0);
}

static void not_elf_or_not_x86_64(void **s)
{
	(void)s;
	make();
	b.eh.e_ident[1] = 'X';
	refused("not an ELF");
	make();
	b.eh.e_ident[EI_CLASS] = ELFCLASS32;
	refused("x86-64");
	make();
	b.eh.e_machine = EM_AARCH64;
	refused("x86-64");
	make();
	b.eh.e_type = ET_DYN;
	refused("ET_EXEC");
}

static void segments_outside_the_window(void **s)
{
	(void)s;
	make();
	b.ph[1].p_vaddr = RLT_INJECT_BASE + RLT_INJECT_SIZE - 16; /* its end past the window */
	refused("outside its window");
	make();
	b.ph[0].p_vaddr = 0x400000;
	refused("outside its window");
	make();
	b.ph[1].p_vaddr = RLT_INJECT_BASE + 0x1010; /* overlaps the code */
	refused("overlap");
}

static void cut_off_or_dynamic(void **s)
{
	(void)s;
	make();
	b.ph[1].p_filesz = 4096; /* more file bytes than the blob has */
	refused("cut off");
	make();
	b.eh.e_phnum = 40;
	refused("cut off");
	make();
	b.eh.e_phnum = 3;
	b.ph[2] = (Elf64_Phdr){.p_type = PT_INTERP};
	refused("dynamically linked");
	make();
	b.eh.e_phnum = 3;
	b.ph[2] = (Elf64_Phdr){.p_type = PT_TLS};
	refused("thread-local");
}

static void entry_in_code(void **s)
{
	(void)s;
	make();
	b.eh.e_entry = RLT_INJECT_BASE + 0x2000; /* in the data */
	refused("not in its code");
	make();
	b.eh.e_phnum = 0;
	refused("nothing to load");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_good_blob_passes),
		cmocka_unit_test(not_elf_or_not_x86_64),
		cmocka_unit_test(segments_outside_the_window),
		cmocka_unit_test(cut_off_or_dynamic),
		cmocka_unit_test(entry_in_code),
	};
	return cmocka_run_group_tests_name("inject_blob", tests, NULL, NULL);
}
