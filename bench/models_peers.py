#!/usr/bin/env python3
# kiln/bench/models_peers.py — whole models, kiln beside PyTorch in one session (issue 33): a
# ResNet-18, a 2-block GPT-2, a U-Net and a 2-layer BERT (tools/model_fixtures.py, bench scale,
# the same random weights and inputs for both), f32 inference.
#
#   models_peers.py BUILD_DIR [RUNS]       (bench/models.sh runs it; bench/peers.sh too)
#
# For each model, in fresh processes: kiln_bench_model_zoo (first compiled call, eager, warm
# compiled, checked against PyTorch's output), then this script's `measure` mode (torch.compile's
# first call, torch eager, warm torch.compile). First calls are cold for both: KILN_DISABLE_CACHE
# and TORCHINDUCTOR_FORCE_DISABLE_CACHES. Times are medians of RUNS calls (default 10) after a
# warm-up call; KILN_PEER_ROUNDS rounds (default 3) alternate kiln and torch per model, and each
# cell is the best round's (this kind of shared VM drifts by tens of percent). Threads: KILN_NUM_THREADS (default: all CPUs) for kiln, torch.set_num_threads
# for torch. Prints a markdown table with the ratios against the targets.
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tools"))
import model_fixtures  # noqa: E402

MODELS = ["resnet18", "gpt2", "unet", "bert"]


def threads():
    return int(os.environ.get("KILN_NUM_THREADS", os.cpu_count()))


def median_ms(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def measure(fixtures, name, runs):
    """torch's figures for one model, in this (fresh) process; prints one JSON line."""
    import torch
    from safetensors.torch import load_file

    torch.set_num_threads(threads())
    model, inputs = model_fixtures.make(name, model_fixtures.SCALES["bench"][name])
    model.load_state_dict(load_file(os.path.join(fixtures, f"{name}.safetensors")), strict=False)
    io = load_file(os.path.join(fixtures, f"{name}_io.safetensors"))
    inputs = [io["input"]] + ([io["token_type"]] if name == "bert" else [])
    with torch.no_grad():
        compiled = torch.compile(model)
        t = time.perf_counter()
        y = compiled(*inputs)
        first_ms = (time.perf_counter() - t) * 1e3
        want = io["output"].double()
        err = float((y.double() - want).abs().max() / want.abs().max())
        eager_ms = median_ms(lambda: model(*inputs), runs)
        compiled_ms = median_ms(lambda: compiled(*inputs), runs)
    print(json.dumps({"first": first_ms, "eager": eager_ms, "compiled": compiled_ms, "err": err}))


def run_kiln(build, fixtures, name, runs):
    env = dict(os.environ, KILN_DISABLE_CACHE="1")
    out = subprocess.run([os.path.join(build, "bench", "kiln_bench_model_zoo"), fixtures, name, "--runs", str(runs)],
                         env=env, check=True, capture_output=True, text=True).stdout
    fields = next(line for line in out.splitlines() if line.startswith("kiln_model ")).split()
    first, eager, compiled, eager_err, compiled_err = map(float, fields[2:7])
    return {"first": first, "eager": eager, "compiled": compiled, "err": max(eager_err, compiled_err),
            "kernels": int(fields[7])}


def run_torch(fixtures, name, runs):
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    out = subprocess.run([sys.executable, __file__, "measure", fixtures, name, str(runs)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(build, runs):
    fixtures = os.environ.get("KILN_MODEL_FIXTURES") or tempfile.mkdtemp(prefix="kiln_models_")
    if not os.path.exists(os.path.join(fixtures, "bert_io.safetensors")):
        print(f"models: writing the bench-scale fixtures into {fixtures}", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(here, "..", "tools", "model_fixtures.py"), fixtures, "--scale",
                        "bench"], check=True)
    rounds = int(os.environ.get("KILN_PEER_ROUNDS", "3"))
    best = {}
    for r in range(rounds):
        for name in MODELS:
            print(f"models: round {r + 1} of {rounds}: {name}", file=sys.stderr)
            for side, fig in (("kiln", run_kiln(build, fixtures, name, runs)), ("torch", run_torch(fixtures, name, runs))):
                old = best.setdefault((side, name), fig)
                for key in ("first", "eager", "compiled"):
                    old[key] = min(old[key], fig[key])
                old["err"] = max(old["err"], fig["err"])
    rows = [(name, best[("kiln", name)], best[("torch", name)]) for name in MODELS]
    cfg = model_fixtures.SCALES["bench"]
    print(f"\nWhole models, f32 inference, {threads()} threads, median of {runs} calls, best of {rounds} rounds; first "
          f"calls cold (KILN_DISABLE_CACHE, TORCHINDUCTOR_FORCE_DISABLE_CACHES), each model in fresh processes.")
    print("Sizes: " + "; ".join(f"{n} {cfg[n]}" for n in MODELS) + " (tools/model_fixtures.py SCALES).\n")
    print("| model | kiln eager ms | kiln compiled ms | kiln first call ms | torch eager ms | torch.compile ms "
          "| torch.compile first call ms | eager / torch eager | compiled / torch.compile | kiln err | torch.compile err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, k, t in rows:
        print(f"| {name} | {k['eager']:.2f} | {k['compiled']:.2f} | {k['first']:.0f} | {t['eager']:.2f} | "
              f"{t['compiled']:.2f} | {t['first']:.0f} | {k['eager'] / t['eager']:.2f}x | "
              f"{k['compiled'] / t['compiled']:.2f}x | {k['err']:.1e} | {t['err']:.1e} |")
    print("\nTargets (issue 33): compiled <= 0.9x torch.compile, eager <= 1.0x torch eager, first call <= 200 ms.")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "measure":
        measure(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) in (2, 3):
        main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 10)
    else:
        raise SystemExit("usage: models_peers.py BUILD_DIR [RUNS]")
