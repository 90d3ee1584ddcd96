build-dev/tests/test_analysis: tests/unit/test_analysis.c \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/cct.h src/record/cct_emit.h src/runtime/engine.h \
 src/format/varint.h tests/unit/tap.h tests/unit/report_build.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/cct.h:
src/record/cct_emit.h:
src/runtime/engine.h:
src/format/varint.h:
tests/unit/tap.h:
tests/unit/report_build.h:
