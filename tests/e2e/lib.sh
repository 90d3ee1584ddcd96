# Shared helpers for the end-to-end scripts (sourced).  Each script prints
# TAP lines; tests/run.sh counts them.  $STACKCLOCK is the tool under test.
set -u
STACKCLOCK=${STACKCLOCK:-$PWD/build/stackclock}
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROGS=$E2E_DIR/../progs
TMP=$(mktemp -d /tmp/sc-e2e.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
_n=0

# The checks start Python hundreds of times.  A version manager's shim (a
# pyenv shim is a shell script that forks a dozen more) cost up to 1 s of
# a loaded machine's time each; the interpreter it picks is asked once
# (tests/run.sh asks for the whole suite: SC_PYTHON) and "python3" here
# runs it directly.  -S: the helpers use the standard library only, and
# the site-packages' .pth files may import more than the helper itself.
if [ -z "${SC_PYTHON:-}" ] || [ ! -x "$SC_PYTHON" ]; then
	SC_PYTHON=$(python3 -c 'import sys; print(sys.executable)') || exit 1
fi
mkdir "$TMP/.py" && printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$SC_PYTHON" >"$TMP/.py/python3" &&
	chmod +x "$TMP/.py/python3" || exit 1
PATH=$TMP/.py:$PATH

ok() {	# ok CONDITION-STATUS MESSAGE  (status 0 = pass)
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; fi
}

check() {	# check MESSAGE -- COMMAND...  (passes when COMMAND succeeds)
	local msg=$1; shift; [ "$1" = -- ] && shift
	local out
	out=$("$@" 2>&1)
	local rc=$?
	ok $rc "$msg"
	[ $rc -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /' | head -20
	return $rc
}

# one_line_fail MESSAGE PATTERN -- COMMAND...: COMMAND fails (status
# 1-127), prints nothing on stdout and one line on stderr matching PATTERN
# (an extended regular expression, case ignored).
one_line_fail() {
	local msg=$1 pat=$2; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ ! -s "$TMP/out" ] &&
	   grep -qiE -e "$pat" "$TMP/err"; then
		ok 0 "$msg"
	else
		ok 1 "$msg"
		echo "#   status $rc, stdout $(wc -l <"$TMP/out") lines, stderr: $(head -3 "$TMP/err")"
	fi
}

# build OUT SOURCE [CC FLAGS...]: compile a test program into $TMP.
build() {
	local out=$1 src=$2; shift 2
	local cc=cc
	case "$src" in *.cc|*.cpp) cc=c++ ;; esac
	$cc -g "$@" -o "$TMP/$out" "$PROGS/$src"
}

# q FILE.json EXPR: evaluate a python expression over the report (r).
q() { _sc query "$1" "$2"; }
# invariants FILE.json: SPEC invariants, checked independently of the tool.
invariants() { check "SPEC invariants hold in $(basename "$1")" -- _sc invariants "$1"; }
# _sc COMMAND FILE [EXPR]: sc.py's answer, from the one sc.py the script
# keeps running (sc.py serve: a script asks a hundred times, and a start
# of Python and json each time was a good part of its run); where that
# one cannot be reached (a pipeline's or background job's subshell, or it
# ended), from an sc.py of its own.
coproc SCQ { exec python3 "$E2E_DIR/sc.py" serve 2>/dev/null; }
_sc() {
	local st out err
	if [ -n "${SCQ[1]:-}" ] &&
		{ printf '%s\0' "$PWD" "$1" "$2" "${3:-}" >&"${SCQ[1]}"; } 2>/dev/null &&
		IFS= read -r -d '' st <&"${SCQ[0]}" && IFS= read -r -d '' out <&"${SCQ[0]}" &&
		IFS= read -r -d '' err <&"${SCQ[0]}"; then
		printf '%s' "$out"
		printf '%s' "$err" >&2
		return "$st"
	fi
	python3 "$E2E_DIR/sc.py" "$@"
}
# report_json DATA OUT.json [REPORT OPTIONS...]: `report --format json` of
# DATA into OUT.json, then SPEC's invariants on it (two TAP lines).
report_json() {
	local data=$1 out=$2; shift 2
	check "report${*:+ $*} into $(basename "$out")" -- _report_into "$out" -i "$data" --format json "$@"
	invariants "$out"
}
_report_into() { local out=$1; shift; "$STACKCLOCK" report "$@" >"$out"; }

# build_patch_dl: in the current directory ($TMP), libpdla.so and
# libpdlb.so (patch_dl_lib.c), patch_dl linked with libpdla (it dlopens
# the other) built without hooks, and patch_dl_hooks, the same with them
build_patch_dl() {
	gcc -O2 -g -shared -fPIC -DP=a -o libpdla.so "$PROGS/patch_dl_lib.c" &&
		gcc -O2 -g -shared -fPIC -DP=b -o libpdlb.so "$PROGS/patch_dl_lib.c" &&
		gcc -O2 -g -o patch_dl "$PROGS/patch_dl.c" -L. -lpdla -Wl,-rpath,"$TMP" -ldl &&
		gcc -O2 -g -finstrument-functions -o patch_dl_hooks "$PROGS/patch_dl.c" -L. -lpdla \
			-Wl,-rpath,"$TMP" -ldl
}

# The builds a runtime test runs, NAME:CC:FLAGS: the hooks with gcc and
# with clang (their -finstrument-functions differ), and gcc without them
# (patched at run time).
BUILD_VARIANTS=("gcc:gcc:-finstrument-functions" "clang:clang:-finstrument-functions" "patched:gcc:")

# rec DATA OUT ERR PROG ARGS...: record -m instrument (and $REC_OPTS), the
# program's output into OUT and ERR, record's status into $TMP/rc.
rec() {
	local data=$1 out=$2 err=$3; shift 3
	"$STACKCLOCK" record -m instrument ${REC_OPTS:-} -o "$data" -- "$@" >"$out" 2>"$err"
	echo $? >"$TMP/rc"
}
