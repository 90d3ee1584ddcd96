build-dev/src/record/discover.o: src/record/discover.c \
 src/record/discover.h src/record/reloc.h src/record/plan_file.h \
 src/symbols/symbols.h src/format/scdata.h src/unwind/unwind.h \
 src/util/util.h
src/record/discover.h:
src/record/reloc.h:
src/record/plan_file.h:
src/symbols/symbols.h:
src/format/scdata.h:
src/unwind/unwind.h:
src/util/util.h:
