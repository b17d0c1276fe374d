#!/usr/bin/env python3
# kiln/tools/opdb_golden_grad.py — PyTorch's gradients for the op database's samples.
#
# Reads test/opdb_golden/<family>.txt (each sample's PyTorch expression and inputs) and writes
# test/opdb_golden_grad/<family>.txt: for every sample whose floating inputs are finite, those
# inputs become float64 leaves that require grad, the expression runs on copies of them, its
# floating outputs that require grad are contracted with the cotangents opdb::cotangent gives
# (((7k + 5j) mod 13 - 6) / 4 at element k of output j) and torch.autograd.grad writes the
# gradient of every leaf ("none" where the output does not depend on it). A sample is recorded
# as "skip" where an output below float64 or non-finite makes finite values meaningless, and as
# "error" where torch raised. test/test_opdb_golden_grad.cpp compares kiln's gradients with these.
# Run by hand (docs/testing.md):
#   /tmp/pt/bin/python tools/opdb_golden_grad.py test/opdb_golden test/opdb_golden_grad
import math
import os
import sys

import torch

from golden_values import fmt
from opdb_golden import parse_input, read_blocks
import opdb_helpers


def cotangent(shape, j):
    n = math.prod(shape)
    vals = [((7 * k + 5 * j) % 13 - 6) / 4.0 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape)


def inputs_hash(lines):
    # FNV-1a (64 bit) of the sample's "in ..." lines joined by newlines: the record's inputs,
    # which test_opdb_golden_grad.cpp checks against test/opdb_golden (stale files fail).
    h = 0xcbf29ce484222325
    for b in "\n".join(l for l in lines if l.startswith("in ")).encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "inputs %016x" % h


def grad_line(i, g):
    if g is None:
        return "grad %d none" % i
    shape = "[" + ",".join(str(s) for s in g.shape) + "]"
    vals = g.detach().to(torch.float64).reshape(-1).tolist()
    return "grad %d f64 %s :%s" % (i, shape, "".join(" " + fmt(v) for v in vals))


def run_block(lines):
    if any(l.startswith("error ") for l in lines):
        return ["skip torch raised"]
    expr = next(l[len("torch: "):] for l in lines if l.startswith("torch: "))
    inputs = [parse_input(l[len("in "):]) for l in lines if l.startswith("in ")]
    leaves, args = [], []
    for t in inputs:
        if t.is_floating_point():
            if not torch.isfinite(t).all():
                return ["skip non-finite input"]
            leaf = t.to(torch.float64).requires_grad_()
            leaves.append(leaf)
            args.append(leaf.clone())
        else:
            leaves.append(None)
            args.append(t)
    if not any(l is not None for l in leaves):
        return ["skip no floating input"]
    env = {"torch": torch, "math": math, "h": opdb_helpers}
    for i, t in enumerate(args):
        env["a%d" % i] = t
    torch.manual_seed(0)
    try:
        out = eval(expr, env)
    except Exception as e:  # noqa: BLE001 - a raise of the f64 run is recorded
        return ["skip torch raised on float64 inputs: " + (str(e).strip().splitlines() or [type(e).__name__])[0]]
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    diff = [j for j, o in enumerate(outs) if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad]
    if not diff:
        return ["outputs none"]
    for j in diff:
        if outs[j].dtype != torch.float64:
            return ["skip output %d is %s" % (j, outs[j].dtype)]
        if not torch.isfinite(outs[j]).all():
            return ["skip output %d is not finite" % j]
    loss = sum((outs[j] * cotangent(list(outs[j].shape), j)).sum() for j in diff)
    wrt = [l for l in leaves if l is not None]
    try:
        grads = torch.autograd.grad(loss, wrt, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - an op without a derivative in torch
        return ["skip torch cannot differentiate: " + (str(e).strip().splitlines() or [type(e).__name__])[0]]
    res = ["outputs " + " ".join(str(j) for j in diff)]
    k = 0
    for i, l in enumerate(leaves):
        if l is None:
            continue
        res.append(grad_line(i, grads[k]))
        k += 1
    return res


def main():
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    torch.set_default_dtype(torch.float32)
    for name in sorted(os.listdir(src)):
        if not name.endswith(".txt"):
            continue
        out = ["# kiln op database golden gradients: written by tools/opdb_golden_grad.py with torch %s; "
               "do not edit." % torch.__version__]
        for header, block in read_blocks(os.path.join(src, name)):
            if not any(l.startswith("out random") for l in block):
                out.append(header)
                out.append(inputs_hash(block))
                out.extend(run_block(block))
                out.append("end")
        with open(os.path.join(dst, name), "w") as f:
            f.write("\n".join(out) + "\n")
        print("wrote", os.path.join(dst, name))


if __name__ == "__main__":
    main()
