#!/usr/bin/env python3
# kiln/tools/fuzz_golden.py — PyTorch golden outputs for the differential fuzzer.
#
# Reads programs emitted by the fuzz test (KILN_FUZZ_EMIT=<file> kiln_test_fuzz
# --gtest_filter=FuzzGolden.Emit), runs each in PyTorch on the recorded inputs (rebuilt with the
# same layouts: transposed, expanded, sliced) and writes test/fuzz_golden/*.txt: the program
# text, its inputs and torch's outputs, or "error <message>" where torch raised. Random outputs
# are recorded by dtype and shape only. Run by hand (docs/testing.md):
#   /tmp/pt/bin/python tools/fuzz_golden.py /tmp/fuzz_programs.txt test/fuzz_golden
import math
import os
import sys

import torch

from golden_values import DTYPES, NAMES, fmt

RANDOM_OPS = {"rand_like", "randn_like"}
PER_FILE = 100


def parse_shape(s):
    s = s.strip("[]")
    return [int(x) for x in s.split(",") if x]


def build_input(values, dtype, shape, layout):
    flat = torch.tensor(values, dtype=torch.float64).to(dtype) if values else torch.zeros(0, dtype=dtype)
    t = flat.reshape(shape)
    rank = len(shape)
    if layout == "transposed" and rank >= 2:
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    if layout == "expanded" and rank >= 1:
        return t[0:1].clone().expand(shape) if shape[0] > 0 else t
    if layout == "sliced" and rank >= 1:
        base = torch.zeros(shape[:-1] + [2 * shape[-1] + 1], dtype=dtype)
        base[..., 1::2] = t
        return base[..., 1::2]
    return t


def run_block(lines):
    program, torch_lines, inputs = [], [], []
    for line in lines:
        if line.startswith("torch: "):
            torch_lines.append(line[len("torch: "):])
        elif line.startswith("input %"):
            inputs.append(line)
        else:
            program.append(line)
    layouts, ops, outputs = {}, {}, []
    for line in program:
        toks = line.split()
        if len(toks) >= 3 and toks[1] == "=":
            ops[int(toks[0][1:])] = toks[2]
            for t in toks[3:]:
                if t.startswith("layout="):
                    layouts[int(toks[0][1:])] = t[len("layout="):]
        if toks and toks[0] == "output":
            outputs = [int(t[1:]) for t in toks[1:]]
    env = {"torch": torch}
    for line in inputs:
        head, _, vals = line.partition(" :")
        _, vid, dt, shape = head.split()
        vid = int(vid[1:])
        values = [float(x) for x in vals.split()] if vals.strip() else []
        env["v%d" % vid] = build_input(values, DTYPES[dt], parse_shape(shape), layouts.get(vid, "contiguous"))
    out = program + inputs
    try:
        for stmt in torch_lines:
            exec(stmt, env)
        results = [env["v%d" % o] for o in outputs]
    except Exception as e:  # torch raised: kiln must raise kiln::Error
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return out + ["error " + msg[:200]]
    for i, (o, r) in enumerate(zip(outputs, results)):
        shape = "[" + ",".join(str(s) for s in r.shape) + "]"
        if ops.get(o) in RANDOM_OPS:
            out.append("out %d random %s %s :" % (i, NAMES[r.dtype], shape))
            continue
        vals = r.detach().reshape(-1)
        vals = vals.to(torch.float64).tolist() if r.is_floating_point() else vals.to(torch.int64).tolist()
        out.append(("out %d %s %s : %s" % (i, NAMES[r.dtype], shape, " ".join(fmt(v) for v in vals))).rstrip())
    return out


def read_emitted(src):
    # The blocks between "begin" and "end" of an emitted program file, as lists of lines.
    blocks, cur = [], None
    with open(src) as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "begin":
                cur = []
            elif line == "end":
                blocks.append(cur)
                cur = None
            elif cur is not None:
                cur.append(line)
    return blocks


def write_goldens(blocks, dst, what, run):
    # run(block) for every block, PER_FILE records to a file programs_NNN.txt under dst.
    os.makedirs(dst, exist_ok=True)
    for start in range(0, len(blocks), PER_FILE):
        path = os.path.join(dst, "programs_%03d.txt" % (start // PER_FILE))
        with open(path, "w") as f:
            f.write("# kiln fuzz golden %s: written by tools/%s with torch %s; do not edit.\n"
                    % (what, os.path.basename(sys.argv[0]), torch.__version__))
            for b in blocks[start:start + PER_FILE]:
                f.write("begin\n" + "\n".join(run(b)) + "\nend\n")
        print("wrote", path)


def main():
    src, dst = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "test/fuzz_golden"
    torch.manual_seed(0)
    write_goldens(read_emitted(src), dst, "outputs", run_block)


if __name__ == "__main__":
    main()
