build-dev/src/output/folded.o: src/output/folded.c src/output/export.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/cct.h src/util/util.h
src/output/export.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/cct.h:
src/util/util.h:
