build-dev/src/analysis/timeline.o: src/analysis/timeline.c \
 src/analysis/timeline.h src/analysis/analysis.h src/format/scdata.h \
 src/symbols/symbols.h src/analysis/internal.h src/format/varint.h \
 src/util/util.h build-dev/gen/syscalls.h
src/analysis/timeline.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/internal.h:
src/format/varint.h:
src/util/util.h:
build-dev/gen/syscalls.h:
