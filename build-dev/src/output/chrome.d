build-dev/src/output/chrome.o: src/output/chrome.c src/output/export.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/timeline.h src/output/output.h src/util/util.h
src/output/export.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/timeline.h:
src/output/output.h:
src/util/util.h:
