build-dev/tests/tracee_cli: tests/unit/tracee_cli.c src/record/tracee.h
src/record/tracee.h:
