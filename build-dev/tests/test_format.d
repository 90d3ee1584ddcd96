build-dev/tests/test_format: tests/unit/test_format.c src/format/scdata.h \
 tests/unit/tap.h
src/format/scdata.h:
tests/unit/tap.h:
