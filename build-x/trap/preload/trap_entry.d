build-x/trap/preload/trap_entry.o: preload/trap_entry.S
