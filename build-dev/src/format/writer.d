build-dev/src/format/writer.o: src/format/writer.c src/format/scdata.h \
 src/util/util.h
src/format/scdata.h:
src/util/util.h:
