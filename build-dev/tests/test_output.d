build-dev/tests/test_output: tests/unit/test_output.c \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/output/output.h tests/unit/json_check.h tests/unit/tap.h \
 src/util/util.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/output/output.h:
tests/unit/json_check.h:
tests/unit/tap.h:
src/util/util.h:
