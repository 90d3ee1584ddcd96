# Helpers shared by the report tests (t20x); sourced after lib.sh.

# report_every_format DATA GROUPING...: for each grouping, `report --check`
# of DATA as table, CSV and JSON into $TMP/GROUPING.{table,csv,json}; then
# SPEC's invariants on the JSON, the table of --width 80 within 80 columns
# (piped without --width, names are whole), and the CSV read by Python's
# csv module: a header, at least one row, none ragged.
report_every_format() {
	local data=$1 by fmt
	shift
	for by in "$@"; do
		for fmt in table csv json; do
			check "report --by $by --format $fmt --check" -- \
				_report_into "$TMP/$by.$fmt" -i "$data" --by "$by" --format "$fmt" --check
		done
		invariants "$TMP/$by.json"
		check "by $by: table of --width 80 fits 80 columns" -- sh -c \
			"'$STACKCLOCK' report -i '$data' --by $by --width 80 | awk 'length > 80 { bad = 1 } END { exit bad }'"
		check "by $by: CSV rows have the header's field count" -- python3 - "$TMP/$by.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) >= 2, "no rows"
assert all(len(r) == len(rows[0]) for r in rows), "ragged CSV"
PY
	done
}
