build-dev/src/record/tracee.o: src/record/tracee.c src/record/tracee.h
src/record/tracee.h:
