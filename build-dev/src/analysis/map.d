build-dev/src/analysis/map.o: src/analysis/map.c src/analysis/internal.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/util/util.h
src/analysis/internal.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/util/util.h:
