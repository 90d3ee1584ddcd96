build-dev/src/output/html.o: src/output/html.c src/output/html.h \
 src/analysis/cct.h src/analysis/analysis.h src/format/scdata.h \
 src/symbols/symbols.h src/analysis/timeline.h src/output/export.h \
 src/output/output.h src/util/util.h
src/output/html.h:
src/analysis/cct.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/timeline.h:
src/output/export.h:
src/output/output.h:
src/util/util.h:
