build-dev/src/symbols/elfobj.o: src/symbols/elfobj.c src/symbols/lazydw.h \
 src/symbols/sym_int.h src/symbols/symbols.h src/format/scdata.h \
 src/unwind/unwind.h src/util/util.h
src/symbols/lazydw.h:
src/symbols/sym_int.h:
src/symbols/symbols.h:
src/format/scdata.h:
src/unwind/unwind.h:
src/util/util.h:
