build-dev/src/record/tl_buf.o: src/record/tl_buf.c src/record/tl_buf.h \
 src/format/scdata.h src/format/varint.h src/util/util.h
src/record/tl_buf.h:
src/format/scdata.h:
src/format/varint.h:
src/util/util.h:
