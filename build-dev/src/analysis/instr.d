build-dev/src/analysis/instr.o: src/analysis/instr.c src/analysis/cct.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/internal.h src/util/util.h
src/analysis/cct.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/internal.h:
src/util/util.h:
