build-dev/src/record/attach.o: src/record/attach.c src/record/record.h \
 src/record/plan_file.h src/record/reloc.h src/record/tracee.h \
 src/runtime/attach.h src/runtime/patch.h src/runtime/shm.h \
 src/runtime/engine.h src/format/scdata.h src/format/varint.h \
 src/symbols/symbols.h src/util/util.h
src/record/record.h:
src/record/plan_file.h:
src/record/reloc.h:
src/record/tracee.h:
src/runtime/attach.h:
src/runtime/patch.h:
src/runtime/shm.h:
src/runtime/engine.h:
src/format/scdata.h:
src/format/varint.h:
src/symbols/symbols.h:
src/util/util.h:
