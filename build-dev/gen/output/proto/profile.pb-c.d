build-dev/gen/output/proto/profile.pb-c.o: \
 build-dev/gen/output/proto/profile.pb-c.c \
 build-dev/gen/output/proto/profile.pb-c.h
build-dev/gen/output/proto/profile.pb-c.h:
