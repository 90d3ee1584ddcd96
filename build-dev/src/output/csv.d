build-dev/src/output/csv.o: src/output/csv.c src/output/output.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h
src/output/output.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
