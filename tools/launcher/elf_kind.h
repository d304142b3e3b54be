/*
 * elf_kind.h: what kind of program COMMAND is (elf_kind.c): a static binary goes under
 * --seccomp, as no preload can reach it.
 */
#ifndef RLT_CLI_ELF_KIND_H
#define RLT_CLI_ELF_KIND_H

/* 1 when cmd (looked up in PATH as execvp does) is an ELF with no program interpreter: a
 * static binary, which a preload cannot reach; 0 for anything else (a dynamic binary, a
 * script, a file not found: exec reports those). (elf_kind.c) */
int rlt_cli_is_static(const char *cmd);

#endif
