build-x/launcher/shm_cmd.o: launcher/shm_cmd.c src/scope_shm.h \
 include/rlthrottle.h launcher/launcher.h
src/scope_shm.h:
include/rlthrottle.h:
launcher/launcher.h:
