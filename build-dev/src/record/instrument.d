build-dev/src/record/instrument.o: src/record/instrument.c \
 src/format/scdata.h src/record/cct_emit.h src/record/discover.h \
 src/record/reloc.h src/record/record.h src/runtime/calib.h \
 src/runtime/engine.h src/format/varint.h src/runtime/libcall.h \
 src/runtime/patch.h src/runtime/shm.h src/util/util.h
src/format/scdata.h:
src/record/cct_emit.h:
src/record/discover.h:
src/record/reloc.h:
src/record/record.h:
src/runtime/calib.h:
src/runtime/engine.h:
src/format/varint.h:
src/runtime/libcall.h:
src/runtime/patch.h:
src/runtime/shm.h:
src/util/util.h:
