build-dev/src/format/records.o: src/format/records.c src/format/scdata.h
src/format/scdata.h:
