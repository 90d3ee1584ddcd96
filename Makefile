# stackclock build.  `make` builds the tool and the runtime; `make test` runs
# the suite; `make SAN=1 test` builds with ASan+UBSan into build-san/.
#
# Every src/<module>/*.c (except the injected runtime) goes into one static
# library that the command-line tool and the unit tests link against, so a
# new source file needs no Makefile change.

#
# CFLAGS and LDFLAGS are the user's (`make CFLAGS=-O0`): the flags the build
# needs live in SC_CFLAGS/SC_LDFLAGS and are always added, as git's Makefile
# keeps ALL_CFLAGS apart from CFLAGS.

CC      ?= gcc
SAN     ?=
O       := $(if $(SAN),build-san,build)
CFLAGS  ?= -O2 -g
LDFLAGS ?=
WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
SC_CFLAGS  := -std=gnu11 $(WARN) -Isrc -I$(O)/gen -D_GNU_SOURCE -MMD -MP
SC_LDFLAGS :=
ifneq ($(SAN),)
SC_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SC_LDFLAGS += -fsanitize=address,undefined
endif
ALL_CFLAGS  = $(SC_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SC_LDFLAGS) $(LDFLAGS)
LIBS    := -lZydis -ldw -lelf -liberty -llzma -lprotobuf-c -lzstd -lz -lstdc++ -lpthread -lm

CORE_SRC := $(filter-out src/cmd/%,$(wildcard src/*/*.c))
CORE_SRC := $(filter-out src/runtime/%,$(CORE_SRC))
# The HTML report's page (src/output/html/) becomes a C source in the build
# directory, part of the library like any other object.
HTML_PAGE := src/output/html/report.html src/output/html/report.css src/output/html/report.js
# The pprof schema (src/output/proto/profile.proto) is compiled by
# protoc-c into an encoder there too.
PROTO_GEN := $(O)/gen/output/proto/profile.pb-c
CORE_OBJ_GEN := $(O)/gen/html_page.o $(PROTO_GEN).o
CMD_SRC  := $(wildcard src/cmd/*.c)
RT_SRC   := $(wildcard src/runtime/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(O)/%.o) $(CORE_OBJ_GEN)
CMD_OBJ  := $(CMD_SRC:%.c=$(O)/%.o)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)

# The runtime lives inside someone else's process: never sanitized (ASan
# cannot be preloaded after the target's own allocator), hidden visibility,
# initial-exec TLS so a probe's thread-local access is one %fs load.
RT_CFLAGS := -std=gnu11 -O2 -g $(CFLAGS) $(WARN) -Isrc -D_GNU_SOURCE -fPIC -fvisibility=hidden \
             -ftls-model=initial-exec -fno-stack-protector -fno-omit-frame-pointer \
             -fno-tree-loop-distribute-patterns

all: $(O)/stackclock $(O)/libstackclock.so $(O)/stackclock-calib $(O)/stackclock-calib-patch $(UNIT_BIN) \
     $(O)/tests/tracee_cli

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/gen/html_page.c: src/output/html/embed.sh $(HTML_PAGE)
	@mkdir -p $(dir $@)
	sh src/output/html/embed.sh $(HTML_PAGE) >$@.tmp && mv $@.tmp $@

# System call names for the timeline's OS events, from the kernel's headers
# (linux-libc-dev): "static const char *const sc_syscall_names[]".
SYSCALL_HDR := $(firstword $(wildcard /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/asm/unistd_64.h))
$(O)/gen/syscalls.h: $(SYSCALL_HDR)
	@mkdir -p $(dir $@)
	{ echo 'static const char *const sc_syscall_names[] = {'; \
	  sed -n 's/^#define __NR_\([a-z0-9_]*\)[ \t]*\([0-9][0-9]*\).*/\t[\2] = "\1",/p' $< ; \
	  echo '};'; } >$@.tmp && mv $@.tmp $@
$(O)/src/analysis/timeline.o: $(O)/gen/syscalls.h

$(PROTO_GEN).c: src/output/proto/profile.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(dir $@) -Isrc/output/proto $<
$(PROTO_GEN).h: $(PROTO_GEN).c
	@:
$(O)/src/output/pprof.o: $(PROTO_GEN).h

$(O)/gen/%.o: $(O)/gen/%.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(O)/libcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(O)/stackclock: $(CMD_OBJ) $(O)/libcore.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(CMD_OBJ) $(O)/libcore.a $(LIBS)

$(O)/libstackclock.so: $(RT_SRC) $(wildcard src/runtime/*.h) src/format/scdata.h src/runtime/runtime.map
	$(CC) $(RT_CFLAGS) -shared -Wl,--version-script=src/runtime/runtime.map -o $@ $(RT_SRC) -lpthread -ldl

# The program the probes' cost is measured on (src/runtime/calib.h): built
# like a target, never sanitized, next to the runtime.
$(O)/stackclock-calib: src/runtime/calib/prog.c src/runtime/calib.h
	$(CC) -std=gnu11 -O2 -Isrc -fno-optimize-sibling-calls -finstrument-functions \
		-finstrument-functions-exclude-function-list=main \
		-Wl,--export-dynamic-symbol=stackclock_calib_plain -o $@ $<

# The same without hooks, for the probes of run-time patching: the
# recorder plans it and the runtime patches it as it would a target.
$(O)/stackclock-calib-patch: src/runtime/calib/prog.c src/runtime/calib.h
	$(CC) -std=gnu11 -O2 -Isrc -fno-optimize-sibling-calls -DRT_CALIB_PATCHED \
		-Wl,--export-dynamic-symbol=stackclock_calib_plain -o $@ $<

$(O)/tests/%: tests/unit/%.c $(O)/libcore.a tests/unit/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(O)/libcore.a $(LIBS)

test: all
	O=$(O) tests/run.sh

# What CI runs: the suite on the normal build, plus the unit and
# end-to-end tests again under ASan+UBSan; one summary line at the end.
NPROC := $(shell nproc 2>/dev/null || echo 2)
check:
	$(MAKE) -j$(NPROC) all
	$(MAKE) -j$(NPROC) SAN=1 all
	O=build SAN_O=build-san tests/run.sh

clean:
	rm -rf build build-san

.PHONY: all test check clean
-include $(CORE_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(UNIT_BIN:=.d)
