build-dev/src/analysis/views.o: src/analysis/views.c src/analysis/cct.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/internal.h src/util/util.h
src/analysis/cct.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/internal.h:
src/util/util.h:
