#!/usr/bin/env python3
# kiln/bench/peers.py — the kiln_bench workloads through PyTorch eager, torch.compile (Inductor)
# and jax.jit, and one table against kiln's figures from the same session.
#
# Run by bench/peers.sh (which makes the venv, runs kiln_bench and calls this twice: with the
# C library's default allocator and with freed memory kept). Modes:
#   peers.py measure OUT.json      time every workload through the three peers, write medians
#   peers.py table DIR ROUNDS       print the markdown table from DIR/kiln_<r>.json,
#                                   DIR/default_<r>.json and DIR/kept_<r>.json, r < ROUNDS: kiln
#                                   compiled and its hand-fused loop, each peer under both
#                                   allocator settings, and kiln / best peer per setting; each
#                                   cell is the smallest of the rounds' medians (this shared VM's
#                                   timings move by 10-50% between minutes)
# Inputs are f32 (targets int64), the shapes of bench/bench_workloads.cpp; each figure is the
# median of timed calls after warm-up (compilation excluded), with the result made ready
# (jax's block_until_ready) inside the timed region.
import json
import os
import platform
import statistics
import sys
import time

# The kiln_bench workloads: key (kiln_bench's benchmark name), label, input shapes, fn family.
WORKLOADS = [
    ("pointwise/16M", "a/(abs(a)+1)*b 16M", "pointwise", [(1 << 24,), (1 << 24,)]),
    ("gelu/64x64", "gelu_tanh(x+bias) [64,64]", "gelu", [(64, 64), (64,)]),
    ("gelu/4096x4096", "gelu_tanh(x+bias) [4096,4096]", "gelu", [(4096, 4096), (4096,)]),
    ("softmax/64x128", "softmax(x,-1) [64,128]", "softmax", [(64, 128)]),
    ("softmax/4096x1024", "softmax(x,-1) [4096,1024]", "softmax", [(4096, 1024)]),
    ("layer_norm/64x64", "layer_norm [64,64]", "layer_norm", [(64, 64), (64,), (64,)]),
    ("layer_norm/4096x1024", "layer_norm [4096,1024]", "layer_norm", [(4096, 1024), (1024,), (1024,)]),
    ("rms_norm/64x64", "rms_norm [64,64]", "rms_norm", [(64, 64), (64,)]),
    ("rms_norm/4096x1024", "rms_norm [4096,1024]", "rms_norm", [(4096, 1024), (1024,)]),
    ("sum_all/4096x4096", "sum(x) [4096,4096]", "sum_all", [(4096, 4096)]),
    ("col_sum/4096x4096", "sum(x,{0}) [4096,4096]", "col_sum", [(4096, 4096)]),
    ("matmul/1024", "matmul 1024^3", "matmul", [(1024, 1024), (1024, 1024)]),
    ("linear_relu/512x1024x1024", "relu(linear) [512,1024]x[1024,1024]", "linear_relu",
     [(512, 1024), (1024, 1024), (1024,)]),
    ("linear3d/2x64x128x384", "linear [2,64,128]x[384,128]", "linear", [(2, 64, 128), (384, 128), (384,)]),
    ("mlp/64x512x2048", "MLP fwd [64,512]->2048->512", "mlp", [(64, 512), (2048, 512), (2048,), (512, 2048), (512,)]),
    ("cross_entropy/4096x1000", "cross_entropy [4096,1000]", "cross_entropy", [(4096, 1000), "targets"]),
    ("index_add/8192x512x16384", "index_add(zeros [8192,512], 0, ids, g [16384,512])", "index_add",
     [(16384, 512), ("ids", 8192, 16384)]),
]
PEERS = ["torch eager", "torch.compile", "jax.jit"]


def host_line():
    model = "unknown CPU"
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "unknown CPU":
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return f"{model}, {isa}, {os.cpu_count()} CPUs, {platform.machine()}"


def time_calls(fn, ready, min_time=0.3, min_runs=5, max_runs=2000):
    for _ in range(3):
        ready(fn())
    samples = []
    start = time.perf_counter()
    while len(samples) < max_runs and (len(samples) < min_runs or time.perf_counter() - start < min_time):
        t0 = time.perf_counter_ns()
        ready(fn())
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e3  # microseconds


def torch_fns(torch):
    F = torch.nn.functional
    return {
        "pointwise": lambda a, b: a / (a.abs() + 1) * b,
        "gelu": lambda x, b: F.gelu(x + b, approximate="tanh"),
        "softmax": lambda x: torch.softmax(x, -1),
        "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
        "rms_norm": lambda x, w: F.rms_norm(x, (x.shape[-1],), w),
        "sum_all": lambda x: x.sum(),
        "col_sum": lambda x: x.sum(0),
        "matmul": lambda a, b: a @ b,
        "linear_relu": lambda x, w, b: torch.relu(F.linear(x, w, b)),
        "linear": lambda x, w, b: F.linear(x, w, b),
        "mlp": lambda x, w1, b1, w2, b2: F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2),
        "cross_entropy": lambda x, t: F.cross_entropy(x, t),
        "index_add": lambda g, i: torch.zeros(8192, g.shape[1]).index_add_(0, i, g),
    }


def jax_fns(jax, jnp):
    def layer_norm(x, w, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * w + b

    def cross_entropy(x, t):
        lse = jax.nn.logsumexp(x, -1)
        return (lse - jnp.take_along_axis(x, t[:, None], -1)[:, 0]).mean()

    return {
        "pointwise": lambda a, b: a / (jnp.abs(a) + 1) * b,
        "gelu": lambda x, b: jax.nn.gelu(x + b, approximate=True),
        "softmax": lambda x: jax.nn.softmax(x, -1),
        "layer_norm": layer_norm,
        "rms_norm": lambda x, w: x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1.1920929e-07) * w,
        "sum_all": lambda x: x.sum(),
        "col_sum": lambda x: x.sum(0),
        "matmul": lambda a, b: a @ b,
        "linear_relu": lambda x, w, b: jax.nn.relu(x @ w.T + b),
        "linear": lambda x, w, b: x @ w.T + b,
        "mlp": lambda x, w1, b1, w2, b2: jax.nn.relu(x @ w1.T + b1) @ w2.T + b2,
        "cross_entropy": cross_entropy,
        "index_add": lambda g, i: jnp.zeros((8192, g.shape[1]), g.dtype).at[i].add(g),
    }


def measure(out_path):
    import numpy as np
    import torch

    threads = int(os.environ.get("KILN_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    tf, jf = torch_fns(torch), jax_fns(jax, jnp)
    results = {}
    for key, label, fam, shapes in WORKLOADS:
        arrays = []
        for s in shapes:
            if s == "targets":
                arrays.append(rng.integers(0, shapes[0][1], size=(shapes[0][0],)).astype(np.int64))
            elif isinstance(s, tuple) and s[0] == "ids":  # ("ids", range, count)
                arrays.append(rng.integers(0, s[1], size=(s[2],)).astype(np.int64))
            else:
                arrays.append(rng.standard_normal(s, dtype=np.float32))
        tins = [torch.from_numpy(a) for a in arrays]
        jins = [jnp.asarray(a) for a in arrays]
        row = {}
        with torch.no_grad():
            row["torch eager"] = time_calls(lambda: tf[fam](*tins), lambda r: None)
            compiled = torch.compile(tf[fam], dynamic=False)
            row["torch.compile"] = time_calls(lambda: compiled(*tins), lambda r: None)
        jitted = jax.jit(jf[fam])
        row["jax.jit"] = time_calls(lambda: jitted(*jins), lambda r: r.block_until_ready())
        results[key] = row
        print(f"  {label}: " + ", ".join(f"{p} {row[p]:.1f} us" for p in PEERS), file=sys.stderr, flush=True)
    with open(out_path, "w") as f:
        json.dump({"host": host_line(), "torch": torch.__version__, "jax": jax.__version__, "threads": threads,
                   "results": results}, f, indent=1)


def kiln_figures(path):
    """kiln_bench's JSON: the median of each workload's compiled and fused-loop runs, in us."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"] if "run_name" in b else b["name"].rsplit("_median", 1)[0]
        name = name.removesuffix("/real_time")
        key, _, mode = name.rpartition("/")
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b["time_unit"]]
        out.setdefault(key, {})[mode] = b["real_time"] * scale
    return out


def peak_flops(path):
    """kiln_bench's JSON: the median limits/peak_fma rate (FLOP/s), or None when it did not run."""
    with open(path) as f:
        data = json.load(f)
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median" and b["name"].startswith("limits/peak_fma"):
            return b.get("FLOP/s")
    return None


# Floating-point operations of the GEMM rows, for their share of the host's peak.
GEMM_FLOPS = {
    "matmul/1024": 2 * 1024**3,
    "linear_relu/512x1024x1024": 2 * 512 * 1024 * 1024,
    "linear3d/2x64x128x384": 2 * 128 * 384 * 128,
    "mlp/64x512x2048": 2 * 2 * 64 * 512 * 2048,
}


def fmt_us(us):
    if us is None:
        return "—"
    return f"{us / 1e3:.2f} ms" if us >= 1000 else f"{us:.1f} µs"


def min_merge(dicts):
    """{key: {column: us}} dicts -> the smallest value per cell."""
    out = {}
    for d in dicts:
        for key, row in d.items():
            for col, us in row.items():
                cur = out.setdefault(key, {}).get(col)
                out[key][col] = us if cur is None else min(cur, us)
    return out


def table(folder, rounds):
    rounds = int(rounds)
    kiln = min_merge(kiln_figures(os.path.join(folder, f"kiln_{r}.json")) for r in range(rounds))
    runs, meta = {}, None
    for name in ("default", "kept"):
        loaded = []
        for r in range(rounds):
            with open(os.path.join(folder, f"{name}_{r}.json")) as f:
                loaded.append(json.load(f))
        meta = meta or loaded[0]
        runs[name] = min_merge(x["results"] for x in loaded)
    print(f"Host: {meta['host']}; {meta['threads']} threads; torch {meta['torch']}, jax {meta['jax']}; "
          f"each cell the best of {rounds} rounds' medians.")
    print("Allocators: *default* is glibc's malloc as it comes (large blocks are mmap'ed and unmapped on free, so")
    print("every call page-faults fresh memory); *kept* sets GLIBC_TUNABLES=glibc.malloc.mmap_max=0:")
    print("glibc.malloc.trim_threshold=… so freed memory is reused, as kiln's caching allocator does.\n")
    head = ["workload", "kiln compiled", "kiln fused loop"]
    for setting in ("default", "kept"):
        head += [f"{p} ({setting})" for p in PEERS]
    head += ["kiln / best peer (default)", "kiln / best peer (kept)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, label, _, _ in WORKLOADS:
        k = kiln.get(key, {})
        comp = k.get("compiled")
        cells = [label, fmt_us(comp), fmt_us(k.get("fused"))]
        ratios = []
        for setting in ("default", "kept"):
            row = runs[setting].get(key, {})
            cells += [fmt_us(row.get(p)) for p in PEERS]
            best = min((row[p] for p in ("torch.compile", "jax.jit") if p in row), default=None)
            ratios.append(f"{comp / best:.2f}x" if comp and best else "—")
        cells += ratios
        print("| " + " | ".join(cells) + " |")
    peaks = [p for p in (peak_flops(os.path.join(folder, f"kiln_{r}.json")) for r in range(rounds)) if p]
    if peaks:
        peak = max(peaks)
        print(f"\nThe host's peak f32 FMA rate, measured by kiln_bench in these rounds (limits/peak_fma): "
              f"{peak / 1e9:.0f} GFLOP/s. Share of it:")
        for key, label, _, _ in WORKLOADS:
            if key not in GEMM_FLOPS:
                continue
            parts = []
            for who, us in (("kiln compiled", kiln.get(key, {}).get("compiled")),
                            ("torch.compile", runs["kept"].get(key, {}).get("torch.compile"))):
                if us:
                    parts.append(f"{who} {100 * GEMM_FLOPS[key] / (us * 1e-6) / peak:.0f}%")
            print(f"- {label}: " + ", ".join(parts))
    shares = []
    for r in range(rounds):
        fig = kiln_figures(os.path.join(folder, f"kiln_{r}.json"))
        read, total = fig.get("limits", {}).get("stream_read"), fig.get("sum_all/4096x4096", {}).get("compiled")
        if read and total:
            shares.append(f"{100 * read / total:.0f}%")  # the same 64 MiB read by both
    if shares:
        print(f"\nsum(x) [4096,4096] against the STREAM read of the same 64 MiB in the same round (target >= 90%): "
              f"{', '.join(shares)} in rounds 1-{rounds}.")
    print("\nkiln / best peer compares kiln compiled with the faster of torch.compile and jax.jit (the issue's")
    print("target: ≤ 1.00x with allocation equalized, the *kept* column).")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "measure":
        measure(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "table":
        table(*sys.argv[2:])
    else:
        sys.exit("usage: peers.py measure OUT.json | peers.py table DIR ROUNDS")
