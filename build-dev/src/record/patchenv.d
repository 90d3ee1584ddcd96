build-dev/src/record/patchenv.o: src/record/patchenv.c \
 src/record/discover.h src/record/reloc.h src/record/record.h \
 src/runtime/patch.h src/util/util.h
src/record/discover.h:
src/record/reloc.h:
src/record/record.h:
src/runtime/patch.h:
src/util/util.h:
