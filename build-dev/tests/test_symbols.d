build-dev/tests/test_symbols: tests/unit/test_symbols.c tests/unit/tap.h \
 src/symbols/symbols.h src/format/scdata.h src/symbols/sym_int.h \
 src/util/util.h
tests/unit/tap.h:
src/symbols/symbols.h:
src/format/scdata.h:
src/symbols/sym_int.h:
src/util/util.h:
