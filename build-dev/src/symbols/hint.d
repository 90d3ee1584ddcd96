build-dev/src/symbols/hint.o: src/symbols/hint.c src/symbols/symbols.h \
 src/format/scdata.h src/util/util.h
src/symbols/symbols.h:
src/format/scdata.h:
src/util/util.h:
