build-dev/src/unwind/unwind.o: src/unwind/unwind.c src/unwind/unwind.h \
 src/unwind/unwind_int.h src/util/util.h
src/unwind/unwind.h:
src/unwind/unwind_int.h:
src/util/util.h:
