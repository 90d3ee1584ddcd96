build-dev/src/cmd/diff.o: src/cmd/diff.c src/analysis/analysis.h \
 src/format/scdata.h src/symbols/symbols.h src/cmd/cmd.h \
 src/output/output.h src/util/util.h
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/cmd/cmd.h:
src/output/output.h:
src/util/util.h:
