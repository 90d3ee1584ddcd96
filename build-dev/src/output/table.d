build-dev/src/output/table.o: src/output/table.c src/analysis/cct.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/output/output.h src/record/reloc.h src/util/util.h
src/analysis/cct.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/output/output.h:
src/record/reloc.h:
src/util/util.h:
