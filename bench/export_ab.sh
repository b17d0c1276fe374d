#!/usr/bin/env bash
# kiln/bench/export_ab.sh — two builds' `kiln run` of one package, alternately, in fresh processes.
#
#   bench/export_ab.sh OLD_DIR NEW_KILN PACKAGE INPUT.npy [RUNS=21] [BETWEEN]
#
# OLD_DIR holds the other build's `kiln` and its libkiln.so* (copied aside: cp -a
# build/release/kiln build/release/libkiln.so* DIR), run with LD_LIBRARY_PATH=OLD_DIR; NEW_KILN is
# this build's. Each round runs old, then new, each followed by BETWEEN (a command; by default
# nothing) as kiln_bench_export runs a compile() process between samples, so that both builds
# meet the same caches. Prints each build's median load_ms, first_call_ms and their sum (the
# sample with the median sum). Minutes apart this host's timings move by more than a small
# change; alternating within one run measures the change.
set -euo pipefail
old_dir=$1 new_kiln=$2 pkg=$3 input=$4 runs=${5:-21} between=${6:-true}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
sample() {
  "$@" run "$pkg" "$input" --stats | awk '/load_ms/{l=$2}/first_call_ms/{c=$2}END{print l, c, l+c}'
}
for _ in $(seq "$runs"); do
  echo "old $(LD_LIBRARY_PATH=$old_dir sample "$old_dir/kiln")" >>"$out"
  bash -c "$between" >/dev/null 2>&1 || true
  echo "new $(sample "$new_kiln")" >>"$out"
  bash -c "$between" >/dev/null 2>&1 || true
done
for v in old new; do
  grep "^$v " "$out" | sort -n -k4 | awk -v v="$v" '{a[NR]=$0} END{split(a[int((NR+1)/2)], f, " ");
    printf "%s: load %.2f ms, first call %.2f ms, load + first call %.2f ms (median of %d)\n", v, f[2], f[3], f[4], NR}'
done
