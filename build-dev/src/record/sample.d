build-dev/src/record/sample.o: src/record/sample.c \
 src/record/sample_int.h src/record/record.h src/format/scdata.h \
 src/unwind/unwind.h src/util/util.h
src/record/sample_int.h:
src/record/record.h:
src/format/scdata.h:
src/unwind/unwind.h:
src/util/util.h:
