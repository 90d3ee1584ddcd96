build-dev/src/output/export.o: src/output/export.c src/output/export.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h
src/output/export.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
