build-dev/src/output/output.o: src/output/output.c src/output/output.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h
src/output/output.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
