#!/usr/bin/env bash
# scripts/gpu_pack.sh — packs a Release build of kiln for a GPU machine that cannot build it.
#
# The GPU machine (the `device` tool) has the CUDA driver, toolkit and PyTorch but no LLVM 19
# and no package installs, so kiln is built here and carried there: libkiln, the CUDA test
# binaries, the GPU benchmark and every shared library they need beyond glibc and libstdc++
# (libLLVM and its dependencies, oneDNN, OpenBLAS, fmt, hiredis), xz-compressed (the carry
# limit is 64 MiB; the libraries are ~270 MB raw, ~55 MB packed). scripts/gpu_check.sh unpacks
# and runs them there.
#
#   scripts/gpu_pack.sh [build-dir=build/release] [out-dir=build/gpu_carry]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-build/gpu_carry}
mkdir -p "$out"
targets="kiln kiln_llvm kiln_onednn kiln_test_cuda kiln_test_opdb kiln_test_export kiln_example_train_digits kiln_example_train_gpt"
ninja -C "$build" -t targets all | grep -q '^kiln_cuda_bench:' && targets="$targets kiln_cuda_bench"
ninja -C "$build" -j2 $targets

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if [ ! -s "$out/deps.tar.xz" ]; then  # the system libraries change only with the packages
  mkdir -p "$stage/deps"
  for f in $(ldd "$build/libkiln.so" "$build/libkiln_llvm.so" "$build/libkiln_onednn.so" | awk '/=>/{print $3}' | grep -v "$build" | sort -u |
             grep -Ev 'lib(c|m|stdc\+\+|gcc_s)\.so'); do
    cp -L "$f" "$stage/deps/"
  done
  cp -L /usr/lib/x86_64-linux-gnu/libopenblas.so.0 "$stage/deps/"
  # ICU's 31 MB data table (libxml2 -> libLLVM) is read only by ICU's converters, which nothing
  # in a GPU run calls: a library of the same name holding an empty table keeps the carry
  # 7 MB under its limit (ICU would report the data missing if anything asked for it).
  for f in "$stage"/deps/libicudata.so.*; do
    [ -e "$f" ] || continue
    v=$(basename "$f" | sed 's/^libicudata\.so\.\([0-9]*\).*/\1/')
    echo "const char icudt${v}_dat[64] = {0};" > "$stage/icudata.c"
    gcc -shared -O1 -o "$f" -Wl,-soname,"libicudata.so.$v" "$stage/icudata.c"
  done
  tar -C "$stage/deps" -cf - . | xz -9 -T2 > "$out/deps.tar.xz"
fi
mkdir -p "$stage/kiln"
cp -L "$build"/libkiln.so.0 "$build"/libkiln_llvm.so.0 "$build"/libkiln_onednn.so.0 "$stage/kiln/"  # libkiln opens these beside it
cp "$build"/test/kiln_test_cuda "$build"/test/kiln_test_opdb "$build"/test/kiln_test_export "$stage/kiln/"
cp "$build"/test/kiln_example_train_digits "$build"/test/kiln_example_train_gpt "$stage/kiln/"
[ -x "$build"/bench/kiln_cuda_bench ] && cp "$build"/bench/kiln_cuda_bench "$stage/kiln/"
tar -C "$stage/kiln" -cf - . | xz -6 -T2 > "$out/kiln.tar.xz"
# The commit the binaries were built from, "+" when the tree had uncommitted changes.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ":!build" 2>/dev/null || echo +)" > "$out/commit.txt"
du -ch "$out"/*.tar.xz
