build-dev/src/symbols/lazydw.o: src/symbols/lazydw.c src/symbols/lazydw.h \
 src/symbols/sym_int.h src/symbols/symbols.h src/format/scdata.h \
 src/util/util.h
src/symbols/lazydw.h:
src/symbols/sym_int.h:
src/symbols/symbols.h:
src/format/scdata.h:
src/util/util.h:
