build-dev/src/record/sample_perf.o: src/record/sample_perf.c \
 src/record/sample_int.h src/record/record.h src/util/util.h
src/record/sample_int.h:
src/record/record.h:
src/util/util.h:
