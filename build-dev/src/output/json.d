build-dev/src/output/json.o: src/output/json.c src/output/output.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/record/reloc.h
src/output/output.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/record/reloc.h:
