#!/usr/bin/env bash
# scripts/gpu_check.sh — every check of the CUDA backend that needs a GPU, in one run.
#
# On a machine with an NVIDIA GPU and the CUDA 13 toolkit, from the repository root:
#   scripts/gpu_check.sh [carry-dir=build/gpu_carry] [out-dir=${OUT:-/tmp/kiln_gpu_out}] [--bench | --bench-only | --row-sweep] [--peers=0] [--sanitize]
# The carry dir is what scripts/gpu_pack.sh made on a machine that builds kiln. It runs:
#   0. with --bench, first, the GPU benchmark against PyTorch eager and torch.compile
#      (bench/cuda_bench.sh; --peers=0 leaves PyTorch out and prints kiln's rows alone);
#   1. the CUDA tests (kiln_test_cuda: copies, eager, compiled, Dynamic::True, the allocator
#      and out of memory, two streams, threads, cuBLASLt, NVRTC and the corpus cubins), and an
#      exported cuda package loaded and run (kiln_test_export, ExportProgram.ACudaPackage*);
#   2. the op database on cuda against the interpreter (kiln_test_opdb --gtest_filter=OpDbCuda.*),
#      eager, compiled and Dynamic::True, and its gradients on cuda against the cpu's, eager and
#      compiled, each in 4 shards (KILN_OPDB_SHARD) run at once;
#   3. the training examples on the GPU against PyTorch's loss curves (examples/train_*.cpp
#      --device cuda --check; docs/optim.md);
#   4. with --sanitize, beside 2: compute-sanitizer's memcheck (out-of-bounds and misaligned
#      device accesses, leaks; with KILN_ALLOCATOR=system) and racecheck (shared-memory hazards)
#      over the GPU tests of kiln_test_cuda, each tool in its own process (SANITIZE_TOOLS adds
#      synccheck or initcheck; SANITIZE_TIMEOUT: seconds per tool, default 150).
# Logs go to the out dir; the exit status is non-zero when a test failed or a tool reported an error.
set -uo pipefail
cd "$(dirname "$0")/.."
carry=build/gpu_carry
out=${OUT:-/tmp/kiln_gpu_out}
bench="" bench_only=0 row_sweep=0 peers=1 sanitize=0 positional=0
for a in "$@"; do
  case "$a" in
    --bench) bench=1 ;;
    --bench-only) bench=1 bench_only=1 ;;
    --row-sweep) row_sweep=1 ;;
    --peers=0) peers=0 ;;
    --sanitize) sanitize=1 ;;
    *) if [ $positional = 0 ]; then carry=$a; else out=$a; fi; positional=$((positional + 1)) ;;
  esac
done
mkdir -p "$out"
root=/tmp/kiln_gpu
rm -rf "$root" && mkdir -p "$root/lib" "$root/cache"
unpack() { xz -dc "$1" | tar -C "$2" -xf - || python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2"; }
unpack "$carry/deps.tar.xz" "$root/lib"
unpack "$carry/kiln.tar.xz" "$root/lib"
export LD_LIBRARY_PATH="$root/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export KILN_CACHE_DIR="$root/cache"
# The test binaries read their data from the checkout they were built in.
[ -d /work/main/test ] || { mkdir -p /work && ln -sfn "$PWD" /work/main; }
nvidia-smi -L 2>&1 | tee "$out/gpu.txt"
echo "kiln at $(cat "$carry/commit.txt" 2>/dev/null || echo "an unknown commit")" | tee -a "$out/gpu.txt"
status=0
if [ $row_sweep = 1 ]; then
  bench/cuda_bench.sh "$root/lib" "$out" --row-sweep
  exit $?
fi
# The benchmark first, when asked for: its numbers come back even if a later step runs out of time.
if [ -n "$bench" ]; then
  BENCH_PEERS=$peers BENCH_PEER_TIMEOUT=${BENCH_PEER_TIMEOUT:-150} BENCH_TRAIN_PEER_TIMEOUT=${BENCH_TRAIN_PEER_TIMEOUT:-120} \
    bench/cuda_bench.sh "$root/lib" "$out" || status=1
  [ $bench_only = 1 ] && exit $status
fi
SECONDS=0
timeout 120 "$root/lib/kiln_test_cuda" 2>&1 | tee "$out/test_cuda.txt" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |^\[==|Failure|error" | head -80
[ "${PIPESTATUS[0]}" = 0 ] || status=1
echo "kiln_test_cuda: ${SECONDS} s"
timeout 120 "$root/lib/kiln_test_export" --gtest_filter='ExportProgram.ACudaPackage*' 2>&1 | tee -a "$out/test_cuda.txt" |
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error" | head -40
[ "${PIPESTATUS[0]}" = 0 ] || status=1
# The sanitizers run beside the op database, each tool in its own process (they are slow, mostly
# on the host). memcheck runs with KILN_ALLOCATOR=system: exact-size device allocations freed at
# once, so that it sees accesses past a tensor's end and reports only real leaks (the test of the
# caching allocator's reuse is left out there). The driver API errors that tests provoke on
# purpose (out of memory, bad launches in CudaGpu.DeviceErrorsAreClear) are not reported: the
# tests assert kiln's error for each.
san_pids=()
if [ "$sanitize" = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    (
      extra="" filter='CudaGpu.*:CudaCublasLt.*' env="" brief=1
      [ $tool = memcheck ] && extra="--leak-check full --report-api-errors no" && filter="$filter:-CudaGpu.AllocatorReusesBlocksAndReportsOutOfMemory" &&
        env="KILN_ALLOCATOR=system"
      # racecheck looks at shared memory, which only kiln's reductions and cuBLASLt's GEMMs use; it
      # makes those GEMMs minutes long (an H200 run timed out at 230 s), and they are NVIDIA's.
      [ $tool = racecheck ] && filter="CudaGpu.*:-CudaGpu.MatmulThroughCublasLt" && brief=0
      echo "== compute-sanitizer --tool $tool $extra ($env) --gtest_filter=$filter"
      # Only the tests that launch kernels; the NVRTC/corpus compiles need no device.
      env $env timeout "${SANITIZE_TIMEOUT:-150}" "$cs" --tool $tool $extra --error-exitcode 7 --print-limit 40 \
        "$root/lib/kiln_test_cuda" --gtest_filter="$filter" --gtest_brief=$brief 2>&1 | grep -v "^=========         Host Frame:.*(testing::|main )" | head -3000
      rc=${PIPESTATUS[0]}
      echo "== $tool: exit status $rc"
      [ "$rc" = 0 ]
    ) > "$out/sanitize_$tool.txt" 2>&1 &
    san_pids+=($!)
  done
fi
# The op-database runs compile hundreds of programs with NVRTC: 4 shards of each of the five
# tests, 20 processes at once.
pids=()
for t in EagerAgreesWithInterpreter CompiledAgreesWithInterpreter DynamicCompiledAgreesWithInterpreter \
         EagerGradientsAgreeWithTheCpu CompiledGradientsAgreeWithTheCpu; do
  for i in 0 1 2 3; do
    KILN_OPDB_SHARD=$i/4 timeout ${OPDB_TIMEOUT:-240} "$root/lib/kiln_test_opdb" --gtest_filter="OpDbCuda.$t" > "$out/opdb_cuda_${t}_$i.txt" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
echo "op database: ${SECONDS} s"
# One file for all shards (the device tool returns only a few files per call).
for f in "$out"/opdb_cuda_*_[0-3].txt; do echo "== $(basename "$f")"; cat "$f"; done > "$out/opdb_cuda.txt"
rm -f "$out"/opdb_cuda_*_[0-3].txt
grep -E "^== |^\[  (FAILED|PASSED|SKIPPED) |entries disagree|entries capture|gradients disagree|gradients compared|^  [a-z_0-9:]+ (sample|: )" "$out/opdb_cuda.txt" |
  cut -c1-250 | head -120
SECONDS=0
for run in "train_digits test/train_fixtures mlp" "train_digits test/train_fixtures cnn" "train_gpt test/train_fixtures"; do
  set -- $run
  exe=$1; shift
  echo "== $exe $* --device cuda --check"
  timeout 120 "$root/lib/kiln_example_$exe" "$@" --device cuda --check || echo "== FAILED: $exe $*"
done > "$out/train_cuda.txt" 2>&1
grep -q "^== FAILED" "$out/train_cuda.txt" && status=1
grep -E "^== |loss curve|accuracy|steps in|train_" "$out/train_cuda.txt"
echo "training examples: ${SECONDS} s"
if [ ${#san_pids[@]} -gt 0 ]; then
  for p in "${san_pids[@]}"; do wait "$p" || status=1; done
  echo "sanitizers: ${SECONDS} s"
  cat "$out"/sanitize_*.txt > "$out/sanitize.txt" && rm -f "$out"/sanitize_*.txt
  grep -E "^== |ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|^=========  *(Invalid|Race|Barrier|Leaked|Program hit|Error)" "$out/sanitize.txt" | head -60
fi
echo "gpu_check: exit status $status"
exit $status
