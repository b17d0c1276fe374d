#!/usr/bin/env bash
# kiln/bench/train.sh — training steps of kiln (eager, compiled) beside PyTorch eager and
# torch.compile in one session; prints the table for bench/README.md.
#
#   bench/train.sh [BUILD_DIR] [RUNS]     (default build/release, 5)
#
# Uses the venv of bench/peers.sh (KILN_PEER_VENV, default ~/.cache/kiln/peer-venv), or
# /tmp/pt when that has torch. Threads: KILN_NUM_THREADS for both (default: all CPUs). Compiles
# are cold for both (KILN_DISABLE_CACHE, TORCHINDUCTOR_FORCE_DISABLE_CACHES).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/release}"
runs="${2:-5}"
venv="${KILN_PEER_VENV:-$HOME/.cache/kiln/peer-venv}"
py="$venv/bin/python"
if ! "$py" -c "import torch" 2>/dev/null; then py=/tmp/pt/bin/python; fi
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "train.sh: no python with torch (run bench/peers.sh once, or make /tmp/pt)" >&2
  exit 1
fi
# Compile times are cold: neither kiln's code cache nor Inductor's caches serve them.
export KILN_DISABLE_CACHE=1 TORCHINDUCTOR_FORCE_DISABLE_CACHES=1
ninja -C "$build" kiln_bench_train >&2
out="$(mktemp)"
"$build/bench/kiln_bench_train" --runs "$runs" | tee "$out" >&2
"$py" "$here/train_peers.py" "$out" "$runs"
