build-dev/src/analysis/rows.o: src/analysis/rows.c \
 src/analysis/internal.h src/analysis/analysis.h src/format/scdata.h \
 src/symbols/symbols.h src/util/util.h
src/analysis/internal.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/util/util.h:
