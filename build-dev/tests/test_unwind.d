build-dev/tests/test_unwind: tests/unit/test_unwind.c tests/unit/tap.h \
 src/unwind/unwind.h src/unwind/unwind_int.h src/util/util.h
tests/unit/tap.h:
src/unwind/unwind.h:
src/unwind/unwind_int.h:
src/util/util.h:
