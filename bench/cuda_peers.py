#!/usr/bin/env python3
"""kiln/bench/cuda_peers.py — bench/cuda_bench.cpp's rows in PyTorch eager and torch.compile on the same GPU.

Timing as kiln_cuda_bench: warm-up (compiling), then five batches of back-to-back calls, each
ended by torch.cuda.synchronize() and sized to last >= 20 ms; the median batch's time per call.
f32 matmuls are exact (allow_tf32 off), as kiln's default. With --kiln FILE (kiln_cuda_bench
--json) it prints one table: kiln eager, kiln compiled, torch eager, torch.compile, the ratio of
kiln compiled to torch.compile, and each memory-bound row's rate against the driver's
device-to-device copy (cuMemcpyDtoDAsync) measured in kiln's run. With --train it times
kiln_cuda_bench --train's training steps instead (train_rows below) and merges them the same way.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def median_us(call):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= 0.02 or n >= 1 << 16:
            break
        n *= 2
    us = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        torch.cuda.synchronize()
        us.append((time.perf_counter() - t0) * 1e6 / n)
    return sorted(us)[2]


def train_rows(dev):
    """kiln_cuda_bench --train's workloads: a step clears the gradients, runs the loss forward and
    backward and steps torch.optim.AdamW(fused=True) over every parameter; "torch.compile" compiles
    the loss (forward and backward)."""
    rows = []

    def param(t):  # parameters, which torch.compile's graphs read in place as kiln's do
        return torch.nn.Parameter(t.to(dev))

    def scaled(shape, fan_in, dt=torch.float32):
        return (torch.randn(*shape) / fan_in ** 0.5).to(dt)

    def mlp(d, hidden):
        w1, b1 = param(scaled((hidden, d), d)), param(torch.zeros(hidden))
        w2, b2 = param(scaled((d, hidden), hidden)), param(torch.zeros(d))
        return [w1, b1, w2, b2], lambda x: F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2).square().mean()

    def gpt_block(B, T, D, H, dt):
        ln1w, ln1b, ln2w, ln2b = (param(f(D, dtype=dt)) for f in (torch.ones, torch.zeros, torch.ones, torch.zeros))
        wqkv, bqkv = param(scaled((3 * D, D), D, dt)), param(torch.zeros(3 * D, dtype=dt))
        wproj, bproj = param(scaled((D, D), D, dt)), param(torch.zeros(D, dtype=dt))
        w1, b1 = param(scaled((4 * D, D), D, dt)), param(torch.zeros(4 * D, dtype=dt))
        w2, b2 = param(scaled((D, 4 * D), 4 * D, dt)), param(torch.zeros(D, dtype=dt))

        def loss(a):
            q = F.linear(F.layer_norm(a, (D,), ln1w, ln1b), wqkv, bqkv).reshape(B, T, 3, H, D // H).permute(2, 0, 3, 1, 4)
            att = F.scaled_dot_product_attention(q[0], q[1], q[2], is_causal=True)
            y = a + F.linear(att.transpose(1, 2).reshape(B, T, D), wproj, bproj)
            y = y + F.linear(F.gelu(F.linear(F.layer_norm(y, (D,), ln2w, ln2b), w1, b1)), w2, b2)
            return y.float().square().mean()

        return [ln1w, ln1b, ln2w, ln2b, wqkv, bqkv, wproj, bproj, w1, b1, w2, b2], loss

    def row(name, model, x, graphs=False):
        params, loss = model
        opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
        modes = ((("torch.compile", torch.compile(loss, mode="reduce-overhead")),) if graphs else
                 (("torch eager", loss), ("torch.compile", torch.compile(loss))))
        for mode, f in modes:
            def step():
                if graphs:
                    torch.compiler.cudagraph_mark_step_begin()
                opt.zero_grad(set_to_none=True)
                f(x).backward()
                opt.step()
            try:
                rows.append({"row": name, "mode": mode, "us": median_us(step), "gbps": 0})
            except Exception as e:
                rows.append({"row": name, "mode": mode, "us": None, "gbps": None, "error": str(e)[:200]})
            print(rows[-1], flush=True)

    torch.manual_seed(0)
    row("train small mlp", mlp(256, 1024), torch.randn(64, 256, device=dev))
    row("train small mlp, cuda graphs", mlp(256, 1024), torch.randn(64, 256, device=dev), graphs=True)
    row("train mlp", mlp(1024, 4096), torch.randn(8192, 1024, device=dev))
    row("train gpt block f32", gpt_block(8, 1024, 768, 12, torch.float32), torch.randn(8, 1024, 768, device=dev))
    row("train gpt block bf16", gpt_block(8, 1024, 768, 12, torch.bfloat16),
        torch.randn(8, 1024, 768, device=dev, dtype=torch.bfloat16))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--kiln")
    ap.add_argument("--train", action="store_true")
    args = ap.parse_args()
    dev = "cuda"
    if args.train:
        print_table(args, train_rows(dev))
        return
    torch.manual_seed(0)
    R = C = 8192
    f4 = 4.0 * R * C
    x, y, z = (torch.randn(R, C, device=dev) for _ in range(3))
    rows = []

    def add(row, mode, fn, inputs, nbytes):
        try:
            us = median_us(lambda: fn(*inputs))
            rows.append({"row": row, "mode": mode, "us": us, "gbps": nbytes / us / 1e3 if nbytes else 0})
        except Exception as e:  # a row torch.compile cannot run is reported, not fatal
            rows.append({"row": row, "mode": mode, "us": None, "gbps": None, "error": str(e)[:200]})
        print(rows[-1], flush=True)

    def both(row, nbytes, fn, *inputs):
        add(row, "torch eager", fn, inputs, nbytes)
        add(row, "torch.compile", torch.compile(fn), inputs, nbytes)

    def attention_backward_row(row, q, k, v):
        # PyTorch's flash backward of causal attention on its forward's output and log-sum-exp
        # (what its autograd runs), as kiln's row times its backward node given the output.
        try:
            fa = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True, False)
        except Exception as e:  # no flash kernel for this input: reported, not fatal
            rows.append({"row": row, "mode": "torch eager", "us": None, "gbps": None, "error": str(e)[:200]})
            return
        g = torch.randn_like(fa[0])
        both(row, 0, lambda g, q, k, v: torch.ops.aten._scaled_dot_product_flash_attention_backward(
            g, q, k, v, fa[0], fa[1], fa[2], fa[3], fa[4], fa[5], 0.0, True, fa[6], fa[7]), g, q, k, v)

    dst = torch.empty_like(x)
    add("copy (cuMemcpyDtoDAsync)", "torch eager", lambda a: dst.copy_(a), (x,), 2 * f4)
    add("copy (clone)", "torch eager", lambda a: a.clone(), (x,), 2 * f4)
    both("a * b + c", 4 * f4, lambda a, b, c: a * b + c, x, y, z)
    both("gelu tanh", 2 * f4, lambda a: F.gelu(a, approximate="tanh"), x)
    both("softmax", 2 * f4, lambda a: torch.softmax(a, -1), x)
    both("layer_norm", 2 * f4, lambda a: F.layer_norm(a, (8192,)), x)
    both("rms_norm", 2 * f4, lambda a: F.rms_norm(a, (8192,)), x)
    both("sum dim 1", f4, lambda a: a.sum(1), x)
    both("sum dim 0", f4, lambda a: a.sum(0), x)
    both("sum all", f4, lambda a: a.sum(), x)
    both("sum dim 1 [16, 4194304]", f4, lambda a: a.sum(1), x.reshape(16, R * C // 16))
    both("sum dim 0 [4194304, 16]", f4, lambda a: a.sum(0), x.reshape(R * C // 16, 16))
    f2 = 2.0 * R * C
    both("a * b + c f16", 4 * f2, lambda a, b, c: a * b + c, x.half(), y.half(), z.half())
    both("gelu tanh bf16", 2 * f2, lambda a: F.gelu(a, approximate="tanh"), x.bfloat16())
    both("softmax bf16", 2 * f2, lambda a: torch.softmax(a, -1), z.bfloat16())
    add("zeros [8192, 8192]", "torch eager", lambda: torch.zeros(R, C, device=dev), (), f4)
    add("full f64 2.5 [8192, 8192]", "torch eager", lambda: torch.full((R, C), 2.5, dtype=torch.float64, device=dev), (), 2 * f4)
    add("arange int64 [67108864]", "torch eager", lambda: torch.arange(0, R * C, 1, dtype=torch.int64, device=dev), (), 2 * f4)
    add("arange f32 from 3 by 2 [67108864]", "torch eager",
        lambda: torch.arange(3, 3 + 2 * R * C, 2, dtype=torch.float32, device=dev), (), f4)
    m = x.clone()
    col = torch.randn(R, device=dev)
    add("copy_ into a column of [8192, 8192]", "torch eager", lambda: m.select(1, 0).copy_(col), (), 8.0 * R)
    logits = torch.randn(8192, 32000, device=dev)
    target = torch.randint(0, 32000, (8192,), device=dev)
    both("cross_entropy [8192,32000]", 4.0 * 8192 * 32000, lambda l, t: F.cross_entropy(l, t), logits, target)
    table = torch.randn(4096, 32000, device=dev)
    ids = torch.randint(0, 4096, (8192,), device=dev)
    both("embedding + cross_entropy", 2 * 4.0 * 8192 * 32000,
         lambda w, i, t: F.cross_entropy(F.embedding(i, w), t), table, ids, target)
    del table, logits
    q, k, v = (torch.randn(8, 16, 2048, 64, device=dev, dtype=torch.float16) for _ in range(3))
    both("attention [8,16,2048,64] f16", 0, lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v)
    both("attention causal f16", 0, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
    attention_backward_row("attention backward causal f16", q, k, v)
    q, k, v = (torch.randn(4, 32, 2048, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
    both("attention causal d128 bf16", 0, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
    attention_backward_row("attention backward causal d128 bf16", q, k, v)
    del q, k, v
    vocab, srows, router = torch.randn(64, 50257, device=dev), torch.randn(256, 32768, device=dev), torch.randn(16384, 8, device=dev)
    both("topk 50 of [64, 50257]", 4.0 * 64 * 50257, lambda a: torch.topk(a, 50, -1)[0], vocab)
    both("sort [256, 32768]", 16.0 * 256 * 32768, lambda a: torch.sort(a, -1)[0], srows)
    both("topk 2 of [16384, 8]", 4.0 * 16384 * 8, lambda a: torch.topk(a, 2, -1)[1], router)
    del vocab, srows, router
    a, b, c = (torch.randn(1024, device=dev) for _ in range(3))
    both("small a * b + c [1024]", 0, lambda a, b, c: a * b + c, a, b, c)
    both("small softmax [64, 64]", 0, lambda a: torch.softmax(a, -1), torch.randn(64, 64, device=dev))
    w1, b1 = torch.randn(1024, 256, device=dev), torch.randn(1024, device=dev)
    w2, b2 = torch.randn(256, 1024, device=dev), torch.randn(256, device=dev)
    block = lambda t: t + F.linear(F.gelu(F.linear(F.layer_norm(t, (256,)), w1, b1)), w2, b2)
    x8 = torch.randn(8, 256, device=dev)
    both("small mlp block [8, 256]", 0, block, x8)
    add("small mlp block, cuda graphs", "torch.compile", torch.compile(block, mode="reduce-overhead"), (x8,), 0)
    for name, dt, n in (("matmul f32 4096", torch.float32, 4096), ("matmul f16 8192", torch.float16, 8192),
                        ("matmul f64 4096", torch.float64, 4096)):
        a = torch.randn(n, n, device=dev, dtype=dt)
        b = torch.randn(n, n, device=dev, dtype=dt)
        us = median_us(lambda: a @ b)
        rows.append({"row": name, "mode": "torch eager", "us": us, "gbps": 2.0 * n ** 3 / us / 1e6})
        print(rows[-1], flush=True)
    h = torch.randn(8192, 1024, device=dev)
    w1, b1 = torch.randn(4096, 1024, device=dev) * 0.03, torch.randn(4096, device=dev)
    w2, b2 = torch.randn(1024, 4096, device=dev) * 0.03, torch.randn(1024, device=dev)
    both("transformer MLP block", 0,
         lambda h, w1, b1, w2, b2: h + F.linear(F.gelu(F.linear(F.layer_norm(h, (1024,)), w1, b1)), w2, b2),
         h, w1, b1, w2, b2)
    x = torch.randn(8192, 4096, device=dev, dtype=torch.float16)
    w = (torch.randn(4096, 4096, device=dev) * 0.02).to(torch.float16)
    b = torch.randn(4096, device=dev, dtype=torch.float16)
    both("linear f16", 0, lambda x, w, b: F.linear(x, w, b), x, w, b)
    both("gelu_tanh(linear) f16", 0, lambda x, w, b: F.gelu(F.linear(x, w, b), approximate="tanh"), x, w, b)
    both("relu(linear) f32", 0, lambda x, w, b: torch.relu(F.linear(x, w, b)), x.float(), w.float(), b.float())
    del x, w, b
    x = torch.randn(32, 64, 56, 56, device=dev)
    w = torch.randn(64, 64, 3, 3, device=dev) * 0.05
    flop = 2.0 * 32 * 64 * 56 * 56 * 64 * 9
    for name, dt in (("conv2d 3x3 [32,64,56,56] f32", torch.float32), ("conv2d 3x3 [32,64,56,56] f16", torch.float16)):
        xd, wd = x.to(dt), w.to(dt)
        us = median_us(lambda: F.conv2d(xd, wd, padding=1))
        rows.append({"row": name, "mode": "torch eager", "us": us, "gbps": flop / us / 1e6})
        print(rows[-1], flush=True)
    del x, w
    print_table(args, rows)


def print_table(args, rows):
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if not args.kiln:
        return
    with open(args.kiln) as f:
        rows += json.load(f)
    by = {(r["row"], r["mode"]): r for r in rows}
    kcopy = by.get(("copy (cuMemcpyDtoDAsync)", "eager"), {}).get("gbps") or 0
    tcopy = by.get(("copy (cuMemcpyDtoDAsync)", "torch eager"), {}).get("gbps") or 0
    print(f"\ndevice-to-device copy (read + write), measured by each side: kiln {kcopy:.0f} GB/s, torch {tcopy:.0f} GB/s\n")
    print("| row | kiln eager us | kiln compiled us | torch eager us | torch.compile us | kiln compiled / torch.compile | kiln compiled of copy BW |")
    print("|---|---|---|---|---|---|---|")
    names = []
    for r in rows:
        if r["row"] not in names:
            names.append(r["row"])

    def us(row, mode):
        r = by.get((row, mode))
        if not r:
            return None
        return r.get("us")

    def fmt(v):
        return "error" if v is None else f"{v:.1f}"

    for name in names:
        ke, kc, te, tc = us(name, "eager"), us(name, "compiled"), us(name, "torch eager"), us(name, "torch.compile")
        ratio = f"{kc / tc:.2f}x" if kc and tc else ""
        kg = by.get((name, "compiled"), {}).get("gbps")
        of_copy = f"{100 * kg / kcopy:.0f}%" if kg and kcopy and not name.startswith("matmul") else ""
        if name.startswith("matmul"):
            kt = by.get((name, "eager"), {}).get("gbps")
            tt = by.get((name, "torch eager"), {}).get("gbps")
            of_copy = f"{kt:.1f} vs {tt:.1f} TFLOP/s ({100 * kt / tt:.0f}% of cuBLAS via torch)" if kt and tt else ""
        print(f"| {name} | {fmt(ke)} | {fmt(kc) if kc or not name.startswith(('copy', 'matmul')) else ''} | {fmt(te)} | {fmt(tc) if tc else ''} | {ratio} | {of_copy} |")


if __name__ == "__main__":
    main()
