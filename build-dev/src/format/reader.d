build-dev/src/format/reader.o: src/format/reader.c src/format/scdata.h \
 src/util/util.h
src/format/scdata.h:
src/util/util.h:
