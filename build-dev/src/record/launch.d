build-dev/src/record/launch.o: src/record/launch.c src/record/record.h \
 src/util/util.h
src/record/record.h:
src/util/util.h:
