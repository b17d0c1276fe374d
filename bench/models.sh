#!/usr/bin/env bash
# kiln/bench/models.sh — whole models (a ResNet-18, a 2-block GPT-2, a U-Net, a 2-layer BERT),
# kiln eager, compiled and first call beside PyTorch eager, torch.compile and its first call, in
# one session; prints the table for bench/README.md (bench/models_peers.py).
#
#   bench/models.sh [BUILD_DIR] [RUNS]     (default build/release, 10)
#
# Uses the venv of bench/peers.sh (KILN_PEER_VENV, default ~/.cache/kiln/peer-venv), or /tmp/pt
# when that has torch and safetensors. KILN_MODEL_FIXTURES names a folder to keep the bench-scale
# fixtures in between runs (default: a fresh temporary folder).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/release}"
runs="${2:-10}"
venv="${KILN_PEER_VENV:-$HOME/.cache/kiln/peer-venv}"
py="$venv/bin/python"
if ! "$py" -c "import torch, safetensors" 2>/dev/null; then py=/tmp/pt/bin/python; fi
if ! "$py" -c "import torch, safetensors" 2>/dev/null; then
  echo "models.sh: no python with torch and safetensors (run bench/peers.sh once, or make /tmp/pt)" >&2
  exit 1
fi
ninja -C "$build" kiln_bench_model_zoo >&2
"$py" "$here/models_peers.py" "$build" "$runs"
