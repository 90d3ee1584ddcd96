#!/usr/bin/env bash
# san: skip
# The stubs' probes leave the vector registers alone (docs/patching.md):
# the trampolines of patched functions and of library calls keep general
# registers only, so every instruction their C halves can run without
# going through sc_rt_vsafe() (which keeps xmm0-15) must touch no vector
# or x87 register.  A static check of the built runtime: from the four
# trampolines, every direct call and jump is followed (sc_rt_vsafe is
# where it stops, the arena's commit callback, the one indirect call, is
# followed by name) and no function reached may use %xmm, %ymm, %zmm, %mm,
# %st or an x87 instruction, nor make another indirect call.  The same
# scan finds sc_rt_vsafe's own saves (the check sees what it looks for).
# t701 runs the dynamic side (patch_exact.c's keep_xmm16: doubles live in
# all sixteen registers across patched calls, same output).
. "$(dirname "$0")/lib.sh"

so=${SC_BUILD:-$PWD/build}/libstackclock.so
command -v objdump >/dev/null || { echo "ok 1 # skip no objdump"; exit 0; }
objdump -d --no-show-raw-insn "$so" >"$TMP/rt.dis" 2>/dev/null
ok $? "objdump of the runtime"

python3 - "$TMP/rt.dis" <<'PY'
import re, sys
funcs, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r'^[0-9a-f]+ <(.+)>:$', line.rstrip())
    if m:
        cur = m.group(1)
        funcs[cur] = []
    elif cur and line.strip():
        funcs[cur].append(line.rstrip())
# (an x87 or state instruction by its mnemonic, the first word: an
# operand such as the address "ffaa" of a jump is not one)
vec_reg = re.compile(r'%[xyz]mm\d|%mm\d|%st\b|%st\(')
vec_op = re.compile(r'^(f[a-z]+|vzero[a-z]+|emms|ldmxcsr|stmxcsr|xsave[a-z]*|xrstor[a-z]*)$')
class vec:
    @staticmethod
    def search(ins):
        words = ins.split()
        return vec_reg.search(ins) or (words and vec_op.match(words[0]))
roots = ['sc_patch_entry_asm', 'sc_patch_return_asm', 'sc_lc_entry_asm', 'sc_lc_return_asm']
# the only indirect branches allowed: the trampolines' jumps on into the
# function or its caller, and the engine's call of the arena's commit
# callback (image.c's rt_commit, followed by name)
allowed_ind = {('sc_patch_return_asm', 'jmp *-0x8(%rsp)'), ('sc_lc_return_asm', 'jmp *%r11'),
               ('sc_eng_tl_grow', 'call *%rax'), ('sc_eng_commit', 'call *%rax')}
extra = {'sc_eng_tl_grow': ['rt_commit'], 'sc_eng_commit': ['rt_commit']}
stop = {'sc_rt_vsafe'}
bad, seen, todo = [], set(), list(roots)
missing = [r for r in roots + ['sc_rt_vsafe', 'rt_commit'] if r not in funcs]
while todo:
    f = todo.pop()
    if f in seen or f in stop:
        continue
    seen.add(f)
    if f not in funcs:
        bad.append('%s: not found' % f)
        continue
    todo += extra.get(f, [])
    for l in funcs[f]:
        ins = ' '.join(l.split('\t')[1:]).strip() if '\t' in l else l
        if vec.search(' ' + ins + ' '):
            bad.append('%s: %s' % (f, ins))
        m = re.search(r'\b(call|jmp|j[a-z]+)\s+[0-9a-f]+\s+<([^>+@]+)', ins)
        if m:
            todo.append(m.group(2))
        elif re.search(r'\b(call|jmp)\s+\*', ins):
            key = re.sub(r'\s+', ' ', re.sub(r'\s+#.*', '', ins).strip())
            if (f, key) not in allowed_ind:
                bad.append('%s: indirect %s' % (f, ins))
ok = not bad and not missing
print(('ok' if ok else 'not ok') + ' 2 - no vector or x87 register on the stubs\' paths outside sc_rt_vsafe '
      '(%d functions reached)' % len(seen))
for b in (missing and ['missing: ' + ' '.join(missing)] or []) + bad[:20]:
    print('#   ' + b)
saves = [l for l in funcs.get('sc_rt_vsafe', []) if vec.search(' ' + l + ' ')]
print(('ok' if len(saves) >= 32 else 'not ok') + ' 3 - the scan sees sc_rt_vsafe\'s saves of xmm0-15 (%d)' % len(saves))
big = len(seen) >= 10 and {'sc_patch_enter', 'sc_lc_enter', 'sc_lc_leave'} <= seen
print(('ok' if big else 'not ok') + ' 4 - the scan reaches the C halves (sc_patch_enter, sc_lc_enter, sc_lc_leave)')
PY
