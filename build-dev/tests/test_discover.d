build-dev/tests/test_discover: tests/unit/test_discover.c \
 src/record/discover.h src/record/reloc.h src/record/plan_file.h \
 tests/unit/tap.h
src/record/discover.h:
src/record/reloc.h:
src/record/plan_file.h:
tests/unit/tap.h:
