#!/usr/bin/env bash
# report's bad input: every usage error and every unusable file gives one
# line on stderr naming the option or file, and a non-zero status (never a
# crash); a truncated file is read up to the damage with a warning.
. "$(dirname "$0")/lib.sh"
build rep_calls rep_calls.c -O1 -finstrument-functions || exit 1
build rep_sample rep_sample.c -O2 || exit 1
"$STACKCLOCK" record -m instrument -o "$TMP/i.data" -- "$TMP/rep_calls" recurse >/dev/null 2>&1
"$STACKCLOCK" record -o "$TMP/s.data" -- "$TMP/rep_sample" 200 >/dev/null 2>&1

fails() {	# fails MESSAGE PATTERN -- COMMAND...: non-zero, one stderr line matching PATTERN
	local msg=$1 pat=$2; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$? lines
	lines=$(wc -l <"$TMP/err")
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$lines" -eq 1 ] && grep -qE -- "$pat" "$TMP/err"; then
		ok 0 "$msg"
	else
		ok 1 "$msg"
		echo "#   status $rc, stderr: $(head -3 "$TMP/err")"
	fi
}
cd "$TMP"
R="$STACKCLOCK report"
fails "no stackclock.data here" "report: cannot read stackclock.data: no such file.*stackclock record" -- $R
fails "missing -i file" "report: cannot read nope.data: no such file" -- $R -i nope.data
fails "a directory" "cannot read $TMP" -- $R -i "$TMP"
: >empty.data
fails "an empty file" "empty.data" -- $R -i empty.data
printf 'hello, not a profile\n' >text.data
fails "a text file" "text.data: .*not a stackclock data file" -- $R -i text.data
fails "unknown --by" "unknown --by 'nonsense'" -- $R -i i.data --by nonsense
fails "unknown --format" "unknown --format 'xml' \(use table\|csv\|json\)" -- $R -i i.data --format xml
fails "unknown --sort column" "unknown --sort column 'bogus'" -- $R -i i.data --sort bogus
fails "a sampling column in an instrumentation report" "--sort inclusive_samples: no such column.*\(use one of: .*elapsed_inclusive_ns" -- $R -i i.data --sort inclusive_samples
fails "negative --top" "invalid --top '-1'" -- $R -i i.data --top -1
fails "non-numeric --top" "invalid --top 'ten'" -- $R -i i.data --top ten
fails "unknown --app-time" "unknown --app-time 'precise'" -- $R -i i.data --app-time=precise
fails "unknown option" "unknown option '--bogus'" -- $R --bogus
fails "option without its value" "option '--by' needs a value" -- $R -i i.data --by
fails "stray argument" "unexpected argument 'extra'" -- $R -i i.data extra
fails "--by address of an instrumentation recording" "--by address needs a sampling recording.*--by line or --by callsite" -- $R -i i.data --by address
fails "--app-time of a sampling recording" "--app-time applies to instrumentation recordings; s.data holds samples" -- $R -i s.data --app-time=exact
fails "--app-time=exact with --by callsite" "--app-time=exact is not recorded per call site" -- $R -i i.data --by callsite --app-time=exact
fails "--app-time=exact with --by line" "--app-time=exact is not recorded per call site.*--by line" -- $R -i i.data --by line --app-time=exact
fails "--raw-times with --by line" "which --by line is made of.*kept only with the probes' cost taken out" -- $R -i i.data --by line --raw-times

check "--help prints the usage" -- sh -c "$R --help | grep -q -- '--app-time'"

# truncated files: read up to the damage with one warning, never a crash
size=$(stat -c %s i.data)
crashed=0
for cut in 1 23 24 40 64 100 $((size / 3)) $((size / 2)) $((size - 9)) $((size - 1)); do
	head -c "$cut" i.data >cut.data
	$R -i cut.data --check --format json >cut.json 2>cut.err
	rc=$?
	if [ $rc -ge 128 ]; then
		crashed=1
		echo "# cut at $cut: status $rc"
	fi
	if [ $rc -eq 0 ] && ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' cut.json; then
		crashed=1
		echo "# cut at $cut: invalid JSON"
	fi
done
ok $crashed "truncated files never crash report, and what is shown is valid JSON"
head -c $((size - 1)) i.data >cut.data
$R -i cut.data >cut.out 2>cut.err
ok $? "a file cut in its last chunk is reported (status 0)"
check "  ... with one warning naming the file and the damage" -- \
	sh -c "test \$(wc -l <cut.err) -eq 1 && grep -qE 'warning: cut.data is damaged .*showing the data read before' cut.err"
check "  ... and the table says the file is damaged" -- grep -q '^DAMAGED FILE' cut.out
# this recording is one chunk: cut, nothing of it is readable
$R -i cut.data --check >/dev/null 2>cut.err
ok $((! $?)) "--check fails when nothing of the file is readable"
check "  ... saying so, with the next step" -- grep -q "nothing in cut.data could be read (truncated chunk.*record it again" cut.err

# bit flips inside chunks: refused or read to the damage, never a crash
crashed=0
for off in 30 50 200 $((size / 2)) $((size - 20)); do
	cp i.data flip.data
	printf '\xff' | dd of=flip.data bs=1 seek="$off" conv=notrunc status=none
	$R -i flip.data --check >/dev/null 2>&1
	[ $? -ge 128 ] && crashed=1
done
ok $crashed "flipped bytes never crash report"
echo "1..$_n"
