build-dev/src/cmd/dump.o: src/cmd/dump.c src/analysis/cct.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/cmd/cmd.h src/record/discover.h src/record/reloc.h src/util/util.h
src/analysis/cct.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/cmd/cmd.h:
src/record/discover.h:
src/record/reloc.h:
src/util/util.h:
