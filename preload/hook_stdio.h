/*
 * hook_stdio.h: C stdio on a socket (hook_stdio.c): glibc's FILE moves bytes without the hooks,
 * so a standard stream that is a socket a rule may pace is made anew at load.
 */
#ifndef RLT_HOOK_STDIO_H
#define RLT_HOOK_STDIO_H

/* stdin, stdout and stderr that are sockets a rule may pace become streams whose moves go
 * through read and write (hook_stdio.c); at load. */
void rlt_pre_stdio_init(void);

#endif
