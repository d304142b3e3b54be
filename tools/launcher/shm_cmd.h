/*
 * shm_cmd.h: `rlthrottle shm` (shm_cmd.c): the shared segments listed and removed.
 */
#ifndef RLT_CLI_SHM_CMD_H
#define RLT_CLI_SHM_CMD_H

/* `rlthrottle shm list` and `rlthrottle shm rm NAME...` (shm_cmd.c). argv[0] is "shm". Returns
 * the launcher's exit status (0, 1 when a NAME could not be removed, 2 for a usage error). */
int rlt_cli_shm_cmd(int argc, char **argv);

#endif
