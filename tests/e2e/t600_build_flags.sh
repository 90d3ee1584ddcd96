#!/usr/bin/env bash
# The user's CFLAGS and LDFLAGS do not replace the flags the build needs
# (git's Makefile habit): `make CFLAGS=-O0` compiles with -O0 and still
# with the include path, the feature macros and -Werror, and the tool so
# built works.  The real build runs once, not again for the sanitizer pass.
. "$(dirname "$0")/lib.sh"
top=$E2E_DIR/../..
line=$(make -C "$top" -nB O="$TMP/b" CFLAGS="-O0 -g3" "$TMP/b/src/util/util.o" | grep -- ' -c ')
for flag in -O0 -g3 -Isrc -D_GNU_SOURCE -Werror -MMD; do
	case " $line " in *" $flag "*) ok 0 "make CFLAGS=-O0 -g3 compiles with $flag" ;;
	*) ok 1 "make CFLAGS=-O0 -g3 compiles with $flag: $line" ;; esac
done
line=$(make -C "$top" -nB O="$TMP/b" LDFLAGS=-Wl,-z,now "$TMP/b/stackclock" | grep -- '-o .*/stackclock ')
case "$line" in *-Wl,-z,now*-lelf*) ok 0 "make LDFLAGS=... links the tool with them" ;;
*) ok 1 "make LDFLAGS=... links the tool with them: $line" ;; esac
case "${SC_BUILD:-}" in *-san) exit 0 ;; esac
check "make CFLAGS=-O0 builds the tool and the runtime" -- \
	make -C "$top" -j2 O="$TMP/b" CFLAGS=-O0 "$TMP/b/stackclock" "$TMP/b/libstackclock.so"
check "the -O0 tool records and reports" -- sh -c \
	"'$TMP/b/stackclock' record -o '$TMP/o.data' -- true && '$TMP/b/stackclock' report -i '$TMP/o.data' --check >/dev/null"
