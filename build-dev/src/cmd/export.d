build-dev/src/cmd/export.o: src/cmd/export.c src/analysis/analysis.h \
 src/format/scdata.h src/symbols/symbols.h src/cmd/cmd.h \
 src/output/export.h src/util/util.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/cmd/cmd.h:
src/output/export.h:
src/util/util.h:
