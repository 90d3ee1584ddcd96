build-dev/tests/test_shares: tests/unit/test_shares.c \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/cct.h src/output/export.h src/output/output.h \
 tests/unit/tap.h tests/unit/report_build.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/cct.h:
src/output/export.h:
src/output/output.h:
tests/unit/tap.h:
tests/unit/report_build.h:
