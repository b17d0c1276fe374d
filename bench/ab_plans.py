#!/usr/bin/env python3
"""Compares what two kiln builds make of the fusion corpus: plans and LLVM IR.

usage: bench/ab_plans.py A/kiln B/kiln [corpus_dir]

Runs `kiln opt FILE --emit-code` with each build on every test/fusion_corpus/*.kir and
compares the "plan and kernels" section (with the schedule annotations that B may print and A
may not — vectorize(...), tile_rows(N), vector_bits(N) — removed) and the optimized LLVM IR.
A refactor of the compiler keeps both identical on one host. Prints one line per file that
differs and a count.
"""
import glob, os, re, subprocess, sys

ANNOTATIONS = [r' vectorize\([^)]*\)', r' tile_rows\(\d+\)', r' vector_bits\(\d+\)']


def section(text, title, stop):
    i = text.find(title)
    if i < 0:
        return None
    i = text.index('\n', i) + 1
    j = text.find(stop, i)
    return text[i:j] if j >= 0 else text[i:]


def report(kiln, path):
    env = dict(os.environ, KILN_DISABLE_CACHE='1')
    out = subprocess.run([kiln, 'opt', path, '--emit-code'], capture_output=True, text=True, env=env).stdout
    plan = section(out, '// ---- plan and kernels ----', '// ----')
    for a in ANNOTATIONS:
        plan = re.sub(a, '', plan or '')
    ir = section(out, '// ---- kernels.ll ----', '// ---- kernels.s') or section(out, '// ---- after llvm_ir ----', '// ---- after assembly')
    return plan, ir


def main():
    a, b = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), '..', 'test', 'fusion_corpus')
    files = sorted(glob.glob(os.path.join(corpus, '*.kir')))
    same = 0
    for f in files:
        pa, ia = report(a, f)
        pb, ib = report(b, f)
        if pa == pb and ia == ib and ia:
            same += 1
        else:
            print(f'{os.path.basename(f)}: plan {"same" if pa == pb else "DIFFERS"}, LLVM IR {"same" if ia == ib else "DIFFERS"}')
    print(f'{same} of {len(files)} fusion-corpus graphs: identical plans and LLVM IR')


if __name__ == '__main__':
    main()
