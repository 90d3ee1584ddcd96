build-dev/src/cmd/main.o: src/cmd/main.c src/cmd/cmd.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/record/record.h src/runtime/patch.h src/util/util.h
src/cmd/cmd.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/record/record.h:
src/runtime/patch.h:
src/util/util.h:
