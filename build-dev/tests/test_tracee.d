build-dev/tests/test_tracee: tests/unit/test_tracee.c src/record/tracee.c \
 src/record/tracee.h tests/unit/tap.h
src/record/tracee.c:
src/record/tracee.h:
tests/unit/tap.h:
