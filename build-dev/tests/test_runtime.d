build-dev/tests/test_runtime: tests/unit/test_runtime.c \
 src/format/scdata.h tests/unit/tap.h
src/format/scdata.h:
tests/unit/tap.h:
