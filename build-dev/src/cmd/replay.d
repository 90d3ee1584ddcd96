build-dev/src/cmd/replay.o: src/cmd/replay.c src/analysis/timeline.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/cmd/cmd.h src/output/output.h src/util/util.h
src/analysis/timeline.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/cmd/cmd.h:
src/output/output.h:
src/util/util.h:
