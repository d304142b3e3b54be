/*
 * launcher.h: what the parts of the rlthrottle command share: its own exit statuses. Each part
 * has its header: check.h, command.h, elf_kind.h, set_cmd.h, shm_cmd.h, stats_cmd.h, top.h,
 * trap_run.h, pub_view.h, inject.h, inject_image.h, trap_filter.h.
 */
#ifndef RLT_LAUNCHER_H
#define RLT_LAUNCHER_H

/* Exit statuses of the launcher's own failures, as env(1) and timeout(1) have them. */
#define RLT_EXIT_OWN 125
#define RLT_EXIT_CANNOT_RUN 126
#define RLT_EXIT_NOTFOUND 127

#endif
