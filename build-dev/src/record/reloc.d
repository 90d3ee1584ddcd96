build-dev/src/record/reloc.o: src/record/reloc.c src/record/reloc.h
src/record/reloc.h:
