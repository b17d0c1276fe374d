#!/usr/bin/env python3
# kiln/bench/train_peers.py — the kiln_bench_train workloads (training steps: forward, backward
# and AdamW) through PyTorch eager and torch.compile, and two tables against kiln's figures from
# the same session: the steps, and the optimizer's step alone against its memory-traffic limit.
#
#   train_peers.py KILN_OUTPUT.txt [RUNS]
#
# KILN_OUTPUT.txt is what kiln_bench_train printed ("kiln <workload> <eager ms> <compiled ms>
# <compile ms> <saved bytes> <optim ms> <optim limit ms>" lines, and "kiln_optim adamw_16m
# <optim ms> <optim limit ms>"). The workloads, shapes, initialization scale and loss are
# bench/bench_train.cpp's. Each time is the median of RUNS steps (default 5) after warm-up
# (torch.compile's compilation is the first step minus a warm one, as for kiln). PyTorch eager
# steps torch.optim.AdamW as constructed by default (its single-tensor loop on the CPU);
# torch.compile's column compiles the loss and, as PyTorch documents for compiled optimizers,
# opt.step. The optimizer table adds AdamW(foreach=True) and AdamW(fused=True). Saved bytes
# for PyTorch eager are the bytes of the distinct storages its autograd graph saves
# (torch.autograd.graph.saved_tensors_hooks), what kiln's compiled forward keeps is its
# partition's. Threads: torch.set_num_threads(KILN_NUM_THREADS or the CPU count).
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def init(shape, fan_in):
    return torch.randn(shape) / fan_in ** 0.5


def mlp():
    ps = [init((2048, 512), 512), torch.zeros(2048), init((512, 2048), 2048), torch.zeros(512)]

    def loss(x, w1, b1, w2, b2):
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2).square().mean()

    return loss, ps, [torch.randn(64, 512)]


def gpt_block():
    B, T, D, H = 8, 128, 256, 4
    ps = [torch.ones(D), torch.zeros(D), torch.ones(D), torch.zeros(D), init((3 * D, D), D), torch.zeros(3 * D),
          init((D, D), D), torch.zeros(D), init((4 * D, D), D), torch.zeros(4 * D), init((D, 4 * D), 4 * D),
          torch.zeros(D)]

    def loss(a, ln1w, ln1b, ln2w, ln2b, wqkv, bqkv, wproj, bproj, w1, b1, w2, b2):
        q = F.linear(F.layer_norm(a, (D,), ln1w, ln1b), wqkv, bqkv).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q[0], q[1], q[2], is_causal=True)
        y = a + F.linear(att.transpose(1, 2).reshape(B, T, D), wproj, bproj)
        y = y + F.linear(F.gelu(F.linear(F.layer_norm(y, (D,), ln2w, ln2b), w1, b1)), w2, b2)
        return y.square().mean()

    return loss, ps, [torch.randn(B, T, D)]


def resnet():
    C = 64
    ps = [init((C, C, 3, 3), C * 9), init((C, C, 3, 3), C * 9), torch.ones(C), torch.zeros(C), torch.ones(C),
          torch.zeros(C)]
    bufs = [torch.zeros(C), torch.ones(C), torch.zeros(C), torch.ones(C)]

    def loss(x, w1, w2, g1, be1, g2, be2):
        y = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), bufs[0], bufs[1], g1, be1, True, 0.1, 1e-5))
        y = F.batch_norm(F.conv2d(y, w2, padding=1), bufs[2], bufs[3], g2, be2, True, 0.1, 1e-5)
        return F.relu(y + x).square().mean()

    return loss, ps, [torch.randn(8, C, 32, 32)]


WORKLOADS = {"mlp": mlp, "gpt_block": gpt_block, "resnet": resnet}


def median_ms(step, runs):
    step()
    t = []
    for _ in range(runs):
        a = time.perf_counter()
        step()
        t.append((time.perf_counter() - a) * 1e3)
    return statistics.median(t)


def saved_bytes(fn, args):
    seen = {}

    def pack(t):
        s = t.untyped_storage()
        seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*args)
    out.backward()
    return sum(seen.values())


def adamw_16m():
    ps = [torch.randn(2048, 1024) for _ in range(8)]
    return None, ps, []


def measure(name, runs):
    torch.manual_seed(0)
    fn, params, inputs = WORKLOADS[name]()
    for p in params:
        p.requires_grad_()
    args = inputs + params
    opt = torch.optim.AdamW(params, lr=1e-4)

    def step_with(f, opt_step):
        def step():
            for p in params:
                p.grad = None
            f(*args).backward()
            opt_step()
        return step

    eager = median_ms(step_with(fn, opt.step), runs)
    compiled_fn = torch.compile(fn)
    copt = torch.optim.AdamW(params, lr=1e-4)
    compiled_opt_step = torch.compile(copt.step)
    step = step_with(compiled_fn, compiled_opt_step)
    a = time.perf_counter()
    step()
    first = (time.perf_counter() - a) * 1e3
    compiled = median_ms(step, runs)
    return eager, compiled, first - compiled, saved_bytes(fn, args), optimizer_steps(params, runs)


def optimizer_steps(params, runs):
    """AdamW's step alone (gradients in place): default, foreach, fused, torch.compile'd."""
    for p in params:
        if p.grad is None:
            p.grad = torch.randn_like(p)
    out = {}
    for label, kwargs in (("default", {}), ("foreach", {"foreach": True}), ("fused", {"fused": True})):
        opt = torch.optim.AdamW(params, lr=1e-4, **kwargs)
        out[label] = median_ms(opt.step, runs)
    opt = torch.optim.AdamW(params, lr=1e-4)
    step = torch.compile(opt.step)
    step()
    out["compiled"] = median_ms(step, runs)
    return out


def main():
    kiln_out = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.set_num_threads(int(os.environ.get("KILN_NUM_THREADS", os.cpu_count())))
    kiln, kiln_optim = {}, {}
    with open(kiln_out) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 8 and parts[0] == "kiln":
                kiln[parts[1]] = [float(v) for v in parts[2:]]
            if len(parts) == 4 and parts[0] == "kiln_optim":
                kiln_optim[parts[1]] = [float(v) for v in parts[2:]]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; f32 training steps (forward + backward + "
          f"AdamW), median of {runs}")
    print()
    print("| workload | kiln eager ms | kiln compiled ms | torch eager ms | torch.compile ms | "
          "kiln compiled / best torch | kiln compile s | torch.compile compile s | kiln saved MB | torch eager saved MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    optim_rows = []
    for name in WORKLOADS:
        if name not in kiln:
            continue
        ke, kc, kcomp, ksaved, kopt, klimit = kiln[name]
        te, tc, tcomp, tsaved, topt = measure(name, runs)
        print(f"| {name} | {ke:.2f} | {kc:.2f} | {te:.2f} | {tc:.2f} | {kc / min(te, tc):.2f}x | {kcomp / 1e3:.3f} | "
              f"{tcomp / 1e3:.2f} | {ksaved / 2**20:.2f} | {tsaved / 2**20:.2f} |", flush=True)
        optim_rows.append((name, kopt, klimit, topt))
    for name, (kopt, klimit) in kiln_optim.items():
        torch.manual_seed(0)
        params = [p.requires_grad_() for p in adamw_16m()[1]]
        optim_rows.append((name, kopt, klimit, optimizer_steps(params, runs)))
    print()
    print("AdamW's step alone; limit: parameters, gradients and both moments read, parameters and moments written "
          "(28 bytes per element) at the rate kiln_bench_train measured for that traffic out of cache")
    print()
    print("| workload | kiln ms | limit ms | kiln / limit | torch default ms | torch foreach ms | torch fused ms | "
          "torch.compile ms | kiln / best torch |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, kopt, klimit, t in optim_rows:
        best = min(t.values())
        print(f"| {name} | {kopt:.3f} | {klimit:.3f} | {kopt / klimit:.2f}x | {t['default']:.3f} | {t['foreach']:.3f} | "
              f"{t['fused']:.3f} | {t['compiled']:.3f} | {kopt / best:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
