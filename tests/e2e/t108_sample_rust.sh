#!/usr/bin/env bash
# Sampling programs linked by lld, as rustc links Rust programs: lld starts
# the code segment in the file page that ends the read-only one, at another
# address, so a mapping's file offset must be turned into an address
# through the code segment (it once went through the read-only one, and a
# Rust program's stacks reached the root in 0-1 % of samples).  A C program
# linked by lld, then a Rust program (tests/progs/smp_rust.rs) through the
# standard library's start-up frames, one thread and four std::thread
# workers, built as `rustc -O -g` and as cargo's release profile does.
# Every stack counted as reaching the root must begin at a thread's root.
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/smp_lib.sh"

# stack_facts DATA: KEY=VALUE lines about the recorded stacks, by thread.
#   root_pct     share of samples whose stack reaches the root
#   bad_roots    stacks counted as reaching the root whose outermost frame
#                is no thread root (_start, or the dynamic linker's
#                _dl_start_user after it, clone, clone3)
#   workers      threads other than the main one with >= 20 samples, and
#   worker_root  the lowest share reaching the root among them
# and for each further argument NAME=KIND:RE (RE a Python regex), NAME=
#   incl:RE      share of samples with a frame matching RE
#   excl:RE      share of samples whose leaf matches RE
#   path:RE      share of samples whose path "root;...;leaf" matches RE
stack_facts() {
	sc_stacks "$1" >"$TMP/stacks.txt" || return 1
	python3 - "$TMP/stacks.txt" "${@:2}" <<'PY'
import re, sys
roots = {"_start", "_dl_start_user", "clone", "clone3", "__clone", "__clone3"}
stacks = []
for line in open(sys.argv[1]):
    state, pid, tid, count, path = line.rstrip("\n").split(" ", 4)
    stacks.append((state, int(pid), int(tid), int(count), path.split(";")))
total = sum(s[3] for s in stacks)
def pct(n, d):
    return 100.0 * n / d if d else 0.0
print("samples=%d" % total)
print("root_pct=%.1f" % pct(sum(s[3] for s in stacks if s[0] == "root"), total))
print("bad_roots=%s" % ",".join(sorted(set(s[4][0] for s in stacks if s[0] == "root" and s[4][0] not in roots))))
per = {}
for state, pid, tid, count, frames in stacks:
    if tid != pid:
        t = per.setdefault(tid, [0, 0])
        t[0] += count
        t[1] += count if state == "root" else 0
workers = [t for t in per.values() if t[0] >= 20]
print("workers=%d" % len(workers))
print("worker_root=%.1f" % min([pct(t[1], t[0]) for t in workers] or [0]))
for q in sys.argv[2:]:
    name, rest = q.split("=", 1)
    kind, rx = rest.split(":", 1)
    c = re.compile(rx)
    if kind == "incl":
        n, d = sum(s[3] for s in stacks if any(c.search(f) for f in s[4])), total
    elif kind == "excl":
        n, d = sum(s[3] for s in stacks if c.search(s[4][-1])), total
    elif kind == "path":
        n, d = sum(s[3] for s in stacks if c.search(";".join(s[4]))), total
    print("%s=%.1f" % (name, pct(n, d)))
PY
}
fact() { sed -n "s/^$1=//p" "$2"; }

# -- C, linked by lld --------------------------------------------------
if command -v ld.lld >/dev/null; then
	build shares_lld e2e_shares.c -O2 -fomit-frame-pointer -fno-optimize-sibling-calls -fuse-ld=lld || exit 1
	off=$(readelf -lW "$TMP/shares_lld" | awk '$1 == "LOAD" && / R E / { print $2 }')
	ok $(( off % 4096 != 0 ? 0 : 1 )) "lld starts the code segment inside a file page (at offset $off)"
	check "record the C program linked by lld" -- "$STACKCLOCK" record -F 999 -o "$TMP/c.data" -- "$TMP/shares_lld" 300
	stack_facts "$TMP/c.data" 'parts=excl:^part_[abc]$' >"$TMP/c.txt"
	r=$(fact root_pct "$TMP/c.txt")
	atleast "$r" 95; ok $? "C linked by lld: $r% of stacks reach the root (>= 95%)"
	p=$(fact parts "$TMP/c.txt")
	atleast "$p" 90; ok $? "... and $p% of samples are in part_a/b/c (>= 90%)"
else
	echo "ok 1 # skip no ld.lld on PATH (Debian package lld)"
fi

# -- Rust ---------------------------------------------------------------
if ! command -v rustc >/dev/null; then
	echo "ok 1 # skip no rustc on PATH (Debian package rustc)"
	exit 0
fi
# Side by side; the second as cargo's release profile builds (opt-level 3,
# no debug info, symbols kept).
rustc -O -g -o "$TMP/rust_g" "$PROGS/smp_rust.rs" 2>"$TMP/rustc_g.err" &
rustc -C opt-level=3 -C strip=debuginfo -o "$TMP/rust_rel" "$PROGS/smp_rust.rs" 2>"$TMP/rustc_rel.err"
rel=$?
wait $!
ok $? "rustc -O -g smp_rust.rs ($(rustc --version))" || { sed 's/^/#   /' "$TMP/rustc_g.err"; exit 1; }
ok $rel "rustc as cargo's release profile (opt-level=3, strip=debuginfo)" || { sed 's/^/#   /' "$TMP/rustc_rel.err"; exit 1; }

crate='^smp_rust::'
h='(::h[0-9a-f]{16})?'
for build in g rel; do
	check "rust_$build, one thread: record" -- \
		"$STACKCLOCK" record -F 999 -o "$TMP/r1$build.data" -- "$TMP/rust_$build" 1 60000
	report_json "$TMP/r1$build.data" "$TMP/r1$build.json"
	stack_facts "$TMP/r1$build.data" "heavy=incl:${crate}heavy$h\$" "light=incl:${crate}light$h\$" \
		"mix=incl:${crate}mix$h\$" "start=path:^_start;(.*;)?main;(.*;)?[^;]*lang_start[^;]*;(.*;)?${crate#^}main$h;" \
		>"$TMP/r1$build.txt"
	f=$TMP/r1$build.txt
	r=$(q "$TMP/r1$build.json" "s['root_reached_pct']")
	atleast "$r" 95; ok $? "rust_$build, one thread: the report says $r% of stacks reach the root (>= 95%)"
	bad=$(fact bad_roots "$f")
	ok $([ -z "$bad" ]; echo $?) "rust_$build: every stack counted as reaching the root begins at _start or clone${bad:+ (not: $bad)}"
	m=$(fact mix "$f")
	atleast "$m" 95; ok $? "rust_$build: smp_rust::mix (the leaf, or inlined code under it) is on $m% of stacks (>= 95%)"
	m=$(fact start "$f")
	atleast "$m" 95; ok $? "rust_$build: $m% of stacks are _start;...;main;...lang_start...;...;smp_rust::main;... (>= 95%)"
	hv=$(fact heavy "$f") lt=$(fact light "$f")
	check "rust_$build: heavy $hv% and light $lt% of samples: heavy has 75% +- 7 of their sum" -- \
		awk -v a="$hv" -v b="$lt" 'BEGIN { s = a / (a + b); exit !(a + b >= 90 && s >= 0.68 && s <= 0.82) }'
done

check "rust_g, four threads: record" -- "$STACKCLOCK" record -F 999 -o "$TMP/r4.data" -- "$TMP/rust_g" 4 20000
stack_facts "$TMP/r4.data" "smp_rust::work=incl:${crate}work$h\$" "thread_start=incl:thread_start" \
	"__rust_begin_short_backtrace=incl:__rust_begin_short_backtrace" >"$TMP/r4.txt"
r=$(fact root_pct "$TMP/r4.txt")
atleast "$r" 95; ok $? "four threads: $r% of stacks reach the root (>= 95%)"
ok $(( $(fact workers "$TMP/r4.txt") == 4 ? 0 : 1 )) "four worker threads sampled ($(fact workers "$TMP/r4.txt"))"
w=$(fact worker_root "$TMP/r4.txt")
atleast "$w" 95; ok $? "each worker thread: >= 95% of its stacks reach the root (lowest $w%)"
bad=$(fact bad_roots "$TMP/r4.txt")
ok $([ -z "$bad" ]; echo $?) "four threads: every stack counted as reaching the root begins at _start or clone${bad:+ (not: $bad)}"
for x in smp_rust::work thread_start __rust_begin_short_backtrace; do
	v=$(fact "$x" "$TMP/r4.txt")
	atleast "$v" 90; ok $? "four threads: $x on $v% of stacks (>= 90%)"
done

# Names as perf shows them: rustc's std, core and alloc are v0-mangled
# ("_RNvNtCs...3std..."), the program's own crate legacy ("_ZN...17h...E").
report_json "$TMP/r4.data" "$TMP/r4.json"
raw=$(q "$TMP/r4.json" "[x['function'] for x in rows if x['function'][:2] in ('_R', '_Z')][:3]")
check "four threads: no row keeps a mangled name (${raw})" -- test "$raw" = "[]"
check "four threads: std's frames by their Rust paths (std::...thread_start)" -- \
	q "$TMP/r4.json" "exit(0 if any(x['function'].startswith('<std::') and x['function'].endswith('thread_start') for x in rows) else 1)"
