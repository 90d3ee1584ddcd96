build-dev/src/output/html_timeline.o: src/output/html_timeline.c \
 src/format/varint.h src/output/html.h src/output/output.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/util/util.h
src/format/varint.h:
src/output/html.h:
src/output/output.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/util/util.h:
