build-dev/src/symbols/symbols.o: src/symbols/symbols.c \
 src/symbols/symbols.h src/format/scdata.h src/symbols/sym_int.h \
 src/util/util.h
src/symbols/symbols.h:
src/format/scdata.h:
src/symbols/sym_int.h:
src/util/util.h:
