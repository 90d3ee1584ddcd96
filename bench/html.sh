#!/usr/bin/env bash
# The HTML report at scale (a benchmark, not a test): `export --format html`
# of a synthetic recording of N calling contexts, then the page opened in
# headless Chromium (tests/e2e/html_drive.py): page size and time from
# navigation to the first full drawing, measured in the page, best of RUNS.
#
#   bench/html.sh [N] [RUNS]          (default 100000 contexts, 3 runs)
#
# Target (issue 9): 100,000 nodes open in under 3 s, the file under 10 MB.
N=${1:-100000}
RUNS=${2:-3}
. "$(dirname "$0")/contexts.sh"
gen_contexts "$TMP/a.data" "$N" 1
"$SC" export -i "$TMP/a.data" --format html -o "$TMP/a.html"
echo "$N contexts: page $(du -k "$TMP/a.html" | cut -f1) KB"
for _ in $(seq "$RUNS"); do
	python3 tests/e2e/html_drive.py "$TMP/a.html" 'eval:document.body.dataset.phases' |
		sed -n 's/^"\(.*\)"$/  in-page ms: \1/p; s/^{"load_ms": \([0-9]*\).*/  load: \1 ms (navigation to ready)/p'
done
