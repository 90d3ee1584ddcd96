build-dev/src/record/sample_model.o: src/record/sample_model.c \
 src/record/sample_int.h src/record/record.h src/record/tl_buf.h \
 src/format/scdata.h src/unwind/unwind.h src/util/util.h
src/record/sample_int.h:
src/record/record.h:
src/record/tl_buf.h:
src/format/scdata.h:
src/unwind/unwind.h:
src/util/util.h:
