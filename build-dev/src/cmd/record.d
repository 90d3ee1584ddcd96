build-dev/src/cmd/record.o: src/cmd/record.c src/cmd/cmd.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/record/record.h src/util/util.h
src/cmd/cmd.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/record/record.h:
src/util/util.h:
