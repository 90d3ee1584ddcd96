build-dev/src/output/pprof.o: src/output/pprof.c src/output/export.h \
 src/analysis/analysis.h src/format/scdata.h src/symbols/symbols.h \
 src/analysis/cct.h build-dev/gen/output/proto/profile.pb-c.h \
 src/util/util.h
src/output/export.h:
src/analysis/analysis.h:
src/format/scdata.h:
src/symbols/symbols.h:
src/analysis/cct.h:
build-dev/gen/output/proto/profile.pb-c.h:
src/util/util.h:
