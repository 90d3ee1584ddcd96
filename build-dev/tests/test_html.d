build-dev/tests/test_html: tests/unit/test_html.c src/output/html.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/output/export.h src/format/varint.h tests/unit/tap.h
src/output/html.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/output/export.h:
src/format/varint.h:
tests/unit/tap.h:
