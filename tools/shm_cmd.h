/* shm_cmd.h: `rlthrottle shm list` and `rlthrottle shm rm NAME...`. */
#ifndef RLT_SHM_CMD_H
#define RLT_SHM_CMD_H

/* argv[0] is "shm". Returns the launcher's exit status (0, 1 when a NAME could not be removed,
 * 2 for a usage error). */
int rlt__shm_cmd(int argc, char **argv);

#endif
