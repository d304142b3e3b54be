/*
 * trap_blob.h: the handler's ELF (make trap-elf), built freestanding (preload/nolibc) and carried
 * inside the launcher by trap_blob.S, so that the command and the code injected into it always
 * come from one build.
 */
#ifndef RLT_CLI_TRAP_BLOB_H
#define RLT_CLI_TRAP_BLOB_H

extern const unsigned char rlt_cli_trap_blob[];
extern const unsigned char rlt_cli_trap_blob_end[];

#endif
