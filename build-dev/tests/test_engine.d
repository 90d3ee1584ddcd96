build-dev/tests/test_engine: tests/unit/test_engine.c src/format/scdata.h \
 src/record/cct_emit.h src/runtime/engine.h src/format/varint.h \
 tests/unit/tap.h
src/format/scdata.h:
src/record/cct_emit.h:
src/runtime/engine.h:
src/format/varint.h:
tests/unit/tap.h:
