build-dev/src/symbols/shorten.o: src/symbols/shorten.c \
 src/symbols/symbols.h src/format/scdata.h src/util/util.h
src/symbols/symbols.h:
src/format/scdata.h:
src/util/util.h:
