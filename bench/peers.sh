#!/usr/bin/env bash
# kiln/bench/peers.sh — kiln against PyTorch eager, torch.compile and jax.jit on the kiln_bench
# workloads, in one session, with both allocator settings; prints the table for bench/README.md.
#
#   bench/peers.sh [BUILD_DIR]     (default build/release; builds kiln_bench there if needed)
#
# Makes a venv with torch and jax from PyPI on first use (KILN_PEER_VENV, default
# ~/.cache/kiln/peer-venv; a few minutes, ~3 GB), runs kiln_bench on the same workloads
# (JSON medians), then the peers twice: with glibc's default allocator, and with freed memory
# kept (no mmap for large blocks, no trimming) so that the peers do not page-fault fresh memory on
# every call, as kiln's caching allocator does not. KILN_PEER_ROUNDS rounds (default 3) of all of
# it; each table cell is the best round's median (this kind of shared VM drifts by minutes). Threads: KILN_NUM_THREADS (default: all
# CPUs) for kiln, torch.set_num_threads for torch; XLA uses the machine. Then the models
# section: four whole models, kiln beside torch eager and torch.compile (bench/models_peers.py;
# KILN_PEER_MODELS=0 leaves it out).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build/release}"
venv="${KILN_PEER_VENV:-$HOME/.cache/kiln/peer-venv}"
out="${KILN_PEER_OUT:-$(mktemp -d)}"
mkdir -p "$out"

if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c "import torch, jax, numpy, safetensors" 2>/dev/null; then
  echo "peers: making $venv (torch, jax[cpu], numpy, safetensors from PyPI)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet torch "jax[cpu]" numpy safetensors
fi

ninja -C "$build" kiln_bench kiln_bench_model_zoo >&2
rounds="${KILN_PEER_ROUNDS:-3}"
filter='^(limits/(peak_fma|stream_copy|stream_read)|(pointwise/16M|(gelu|softmax|layer_norm|rms_norm|sum_all|col_sum|matmul|linear_relu|linear3d|mlp|cross_entropy|index_add)/[^/]*)/(compiled|fused))/real_time$'
for ((r = 0; r < rounds; r++)); do
  echo "peers: round $((r + 1)) of $rounds: kiln_bench" >&2
  "$build/bench/kiln_bench" --benchmark_filter="$filter" --benchmark_out="$out/kiln_$r.json" \
    --benchmark_out_format=json >&2
  echo "peers: round $((r + 1)): torch and jax, default allocator" >&2
  "$venv/bin/python" "$here/peers.py" measure "$out/default_$r.json"
  echo "peers: round $((r + 1)): torch and jax, freed memory kept" >&2
  GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736 \
    "$venv/bin/python" "$here/peers.py" measure "$out/kept_$r.json"
done

"$venv/bin/python" "$here/peers.py" table "$out" "$rounds"
echo "peers: raw figures in $out" >&2
if [[ "${KILN_PEER_MODELS:-1}" != 0 ]]; then
  "$venv/bin/python" "$here/models_peers.py" "$build"
fi
