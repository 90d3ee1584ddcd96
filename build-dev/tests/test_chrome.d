build-dev/tests/test_chrome: tests/unit/test_chrome.c \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/format/varint.h src/output/export.h tests/unit/json_check.h \
 tests/unit/tap.h src/util/util.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/format/varint.h:
src/output/export.h:
tests/unit/json_check.h:
tests/unit/tap.h:
src/util/util.h:
