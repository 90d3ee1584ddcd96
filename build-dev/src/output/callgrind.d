build-dev/src/output/callgrind.o: src/output/callgrind.c \
 src/output/export.h src/analysis/analysis.h src/format/scdata.h \
 src/symbols/symbols.h src/analysis/cct.h src/util/util.h
src/output/export.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/cct.h:
src/util/util.h:
