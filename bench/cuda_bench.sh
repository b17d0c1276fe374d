#!/usr/bin/env bash
# kiln/bench/cuda_bench.sh — the GPU benchmark: kiln_cuda_bench, then the same rows in PyTorch, one table.
#
#   bench/cuda_bench.sh <dir holding kiln_cuda_bench> <out dir>     (BENCH_PEER_TIMEOUT: seconds for PyTorch, default 900;
#                                                                      BENCH_PEERS=0: kiln alone;
#                                                                      BENCH_TRAIN=0: no training steps)
# Cold compile of a softmax twice with one fresh KILN_CACHE_DIR (NVRTC, then the disk cache),
# every row of kiln (eager and compiled) with --json, then bench/cuda_peers.py (PyTorch eager
# and torch.compile) merging both into one Markdown table; everything is kept in <out>/cuda_bench.txt
# (the rows' JSON files are temporary: the device tool returns few files).
set -uo pipefail
bin=$1
out=$2
# --row-sweep (third argument): the compiled row kernels alone (kiln_cuda_bench --rows, each
# checked against eager) under each block width and with and without the register cache, each
# in a fresh process and compile cache; into <out>/cuda_rows.txt.
if [ "${3:-}" = "--row-sweep" ]; then
  status=0
  for threads in 0 128 256 512 1024; do
    for cache in 1 0; do
      echo "== KILN_CUDA_ROW_THREADS=$threads KILN_CUDA_ROW_CACHE=$cache"
      dir=$(mktemp -d)
      KILN_CACHE_DIR=$dir KILN_CUDA_ROW_THREADS=$threads KILN_CUDA_ROW_CACHE=$cache "$bin/kiln_cuda_bench" --rows || status=1
      rm -rf "$dir"
    done
  done > "$out/cuda_rows.txt" 2>&1
  cat "$out/cuda_rows.txt"
  exit $status
fi
mkdir -p "$out"
log="$out/cuda_bench.txt"
cache=$(mktemp -d)
{
  echo "== cold compile (NVRTC), then disk-warm, of a compiled softmax in a fresh process"
  KILN_CACHE_DIR=$cache "$bin/kiln_cuda_bench" --cold
  KILN_CACHE_DIR=$cache "$bin/kiln_cuda_bench" --cold
  echo "== kiln"
  "$bin/kiln_cuda_bench" --json "$cache/kiln_cuda.json" || echo "kiln_cuda_bench failed: $?"
  if [ "${BENCH_PEERS:-1}" = 0 ]; then
    echo "== PyTorch left out (BENCH_PEERS=0)"
  else
    echo "== PyTorch (eager, torch.compile) and the merged table"
    PYTHONUNBUFFERED=1 timeout "${BENCH_PEER_TIMEOUT:-900}" python3 bench/cuda_peers.py --json "$cache/torch_cuda.json" --kiln "$cache/kiln_cuda.json" ||
      echo "cuda_peers.py failed: $?"
  fi
  # Training steps (BENCH_TRAIN=0 leaves them out): kiln's, then PyTorch's under their own
  # timeout (BENCH_TRAIN_PEER_TIMEOUT, default 300 s: torch.compile compiles three backward
  # graphs), merged into a second table.
  if [ "${BENCH_TRAIN:-1}" != 0 ]; then
    echo "== training steps: kiln (eager, compiled)"
    "$bin/kiln_cuda_bench" --train --json "$cache/kiln_train.json" || echo "kiln_cuda_bench --train failed: $?"
    if [ "${BENCH_PEERS:-1}" != 0 ]; then
      echo "== training steps: PyTorch (eager, torch.compile) and the merged table"
      PYTHONUNBUFFERED=1 timeout "${BENCH_TRAIN_PEER_TIMEOUT:-300}" python3 bench/cuda_peers.py --train --kiln "$cache/kiln_train.json" ||
        echo "cuda_peers.py --train failed: $?"
    fi
  fi
} 2>&1 | tee "$log"
rm -rf "$cache"
