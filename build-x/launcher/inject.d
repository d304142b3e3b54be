build-x/launcher/inject.o: launcher/inject.c launcher/inject.h \
 src/inject_proto.h
launcher/inject.h:
src/inject_proto.h:
