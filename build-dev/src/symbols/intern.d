build-dev/src/symbols/intern.o: src/symbols/intern.c \
 src/symbols/sym_int.h src/symbols/symbols.h src/format/scdata.h \
 src/util/util.h
src/symbols/sym_int.h:
src/symbols/symbols.h:
src/format/scdata.h:
src/util/util.h:
