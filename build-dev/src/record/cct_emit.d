build-dev/src/record/cct_emit.o: src/record/cct_emit.c \
 src/record/cct_emit.h src/format/scdata.h src/runtime/engine.h \
 src/format/varint.h
src/record/cct_emit.h:
src/format/scdata.h:
src/runtime/engine.h:
src/format/varint.h:
