build-x/launcher/elf_kind.o: launcher/elf_kind.c launcher/launcher.h
launcher/launcher.h:
