build-dev/src/unwind/table.o: src/unwind/table.c src/unwind/unwind.h \
 src/unwind/unwind_int.h src/util/util.h
src/unwind/unwind.h:
src/unwind/unwind_int.h:
src/util/util.h:
