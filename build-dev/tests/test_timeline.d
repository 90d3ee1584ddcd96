build-dev/tests/test_timeline: tests/unit/test_timeline.c \
 src/analysis/timeline.h src/analysis/analysis.h src/format/scdata.h \
 src/symbols/symbols.h src/format/varint.h src/record/cct_emit.h \
 src/runtime/engine.h tests/unit/tap.h src/util/util.h
src/analysis/timeline.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/format/varint.h:
src/record/cct_emit.h:
src/runtime/engine.h:
tests/unit/tap.h:
src/util/util.h:
