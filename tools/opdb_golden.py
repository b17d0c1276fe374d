#!/usr/bin/env python3
# kiln/tools/opdb_golden.py — PyTorch's outputs for the op database's samples.
#
# Reads the files OpDbGolden.Emit writes (one per family: the entry, its PyTorch expression over
# a0, a1, ... and each input's values), evaluates every expression in PyTorch on the same inputs
# and writes test/opdb_golden/<family>.txt with the outputs appended, or "error <message>" where
# torch raised. Random entries record dtype and shape only. Run by hand (docs/testing.md):
#   KILN_OPDB_EMIT=/tmp/opdb build/dev/test/kiln_test_opdb --gtest_filter=OpDbGolden.Emit
#   /tmp/pt/bin/python tools/opdb_golden.py /tmp/opdb test/opdb_golden
import math
import os
import sys

import torch

from golden_values import DTYPES, NAMES, fmt
import opdb_helpers


def parse_input(text):
    # "f32 [2,3] : 1.5 -0.25 ..."
    head, _, vals = text.partition(" : ") if " : " in text else (text.rstrip(" :"), "", "")
    dtype, shape = head.split(" ")
    shape = [int(x) for x in shape.strip("[]").split(",") if x]
    values = [float(x) for x in vals.split()] if vals else []
    flat = torch.tensor(values, dtype=torch.float64) if values else torch.zeros(0, dtype=torch.float64)
    return flat.to(DTYPES[dtype]).reshape(shape)


def value_line(t, random):
    t = t.detach()
    shape = "[" + ",".join(str(s) for s in t.shape) + "]"
    if random:
        return "out random %s %s" % (NAMES[t.dtype], shape)
    vals = t.reshape(-1).tolist() if t.dtype in (torch.bool,) else t.to(torch.float64).reshape(-1).tolist() \
        if t.is_floating_point() else t.reshape(-1).tolist()
    return "out %s %s :%s" % (NAMES[t.dtype], shape, "".join(" " + fmt(v) for v in vals))


def run_block(header, lines):
    random = header.endswith(" random")
    expr = next(l[len("torch: "):] for l in lines if l.startswith("torch: "))
    inputs = [parse_input(l[len("in "):]) for l in lines if l.startswith("in ")]
    env = {"torch": torch, "math": math, "h": opdb_helpers}
    for i, t in enumerate(inputs):
        env["a%d" % i] = t
    torch.manual_seed(0)
    try:
        out = eval(expr, env)
    except Exception as e:  # noqa: BLE001 - any torch error is a recorded outcome
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return ["error " + msg]
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [value_line(o, random) for o in outs]


def read_blocks(path):
    # The (header, lines) of each "begin ... end" record of a file.
    block, header = None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("begin "):
                header, block = line, []
            elif line == "end":
                yield header, block
                block = None
            elif block is not None:
                block.append(line)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    torch.set_default_dtype(torch.float32)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".txt"):
            continue
        out = ["# kiln op database golden values: written by tools/opdb_golden.py with torch %s; do not edit."
               % torch.__version__]
        for header, block in read_blocks(os.path.join(src, name)):
            out.append(header)
            out.extend(block)
            out.extend(run_block(header, block))
            out.append("end")
        with open(os.path.join(dst, name), "w") as f:
            f.write("\n".join(out) + "\n")
        print("wrote", os.path.join(dst, name))


if __name__ == "__main__":
    main()
