build-dev/src/unwind/cache.o: src/unwind/cache.c src/unwind/unwind.h \
 src/unwind/unwind_int.h src/util/util.h
src/unwind/unwind.h:
src/unwind/unwind_int.h:
src/util/util.h:
