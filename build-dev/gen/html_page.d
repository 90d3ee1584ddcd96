build-dev/gen/html_page.o: build-dev/gen/html_page.c src/output/html.h
src/output/html.h:
