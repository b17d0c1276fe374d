#!/usr/bin/env python3
# kiln/tools/fuzz_golden_grad.py — PyTorch's gradients of the differential fuzzer's programs.
#
# Reads programs emitted by KILN_FUZZ_BACKWARD_EMIT=<file> kiln_test_fuzz
# --gtest_filter=FuzzBackward.Emit (text, torch lines and inputs) and writes
# test/fuzz_golden_grad/*.txt. As test_fuzz_backward.cpp does for kiln: the floating inputs
# become contiguous float64 leaves that require grad, the program runs on them, its floating
# outputs that require grad are contracted with the cotangent ((7k + 5j) mod 13 - 6) / 4 at
# element k of output j, and torch.autograd.grad gives every leaf's gradient (zeros where
# unused): "grad <n> f64 [shape] : values", n counting the floating inputs. A program torch
# rejects, with no differentiable output or with non-finite values is "skip <why>".
# Run by hand (docs/testing.md):
#   /tmp/pt/bin/python tools/fuzz_golden_grad.py /tmp/fuzz_backward.txt test/fuzz_golden_grad
import math
import sys

import torch

from golden_values import DTYPES, fmt
from fuzz_golden import parse_shape, read_emitted, write_goldens

def cotangent(shape, j):
    n = math.prod(shape)
    vals = [((7 * k + 5 * j) % 13 - 6) / 4.0 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape)


def run_block(lines):
    program, torch_lines, inputs = [], [], []
    for line in lines:
        if line.startswith("torch: "):
            torch_lines.append(line[len("torch: "):])
        elif line.startswith("input %"):
            inputs.append(line)
        else:
            program.append(line)
    outputs = []
    for line in program:
        toks = line.split()
        if toks and toks[0] == "output":
            outputs = [int(t[1:]) for t in toks[1:]]
    env, leaves = {"torch": torch}, []
    for line in inputs:
        head, _, vals = line.partition(" :")
        _, vid, dt, shape = head.split()
        values = [float(x) for x in vals.split()] if vals.strip() else []
        t = (torch.tensor(values, dtype=torch.float64) if values else torch.zeros(0, dtype=torch.float64))
        t = t.to(DTYPES[dt]).reshape(parse_shape(shape))
        if t.is_floating_point():
            t = t.to(torch.float64).clone().requires_grad_()
            leaves.append(t)
        env["v%d" % int(vid[1:])] = t
    out = program + inputs
    try:
        for stmt in torch_lines:
            exec(stmt, env)
        results = [env["v%d" % o] for o in outputs]
        loss = None
        for j, r in enumerate(results):
            if isinstance(r, torch.Tensor) and r.is_floating_point() and r.requires_grad:
                if not torch.isfinite(r).all():
                    return out + ["skip output %d is not finite" % j]
                term = (r.to(torch.float64) * cotangent(list(r.shape), j)).sum()
                loss = term if loss is None else loss + term
        if loss is None or not leaves:
            return out + ["skip no differentiable output"]
        grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - torch rejected the program or cannot differentiate it
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return out + ["skip torch raised: " + msg[:160]]
    res = []
    for n, (leaf, g) in enumerate(zip(leaves, grads)):
        g = torch.zeros_like(leaf) if g is None else g
        if not torch.isfinite(g).all():
            return out + ["skip gradient %d is not finite" % n]
        shape = "[" + ",".join(str(s) for s in g.shape) + "]"
        res.append(("grad %d f64 %s : %s" % (n, shape, " ".join(fmt(v) for v in g.detach().reshape(-1).tolist()))).rstrip())
    return out + res


def main():
    src, dst = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "test/fuzz_golden_grad"
    write_goldens(read_emitted(src), dst, "gradients", run_block)


if __name__ == "__main__":
    main()
