// kiln/codegen_cuda/cuda_sort_source.cpp — the sort kernels' text and launch plan (cuda_sort_source.h).
#include "codegen_cuda/cuda_sort_source.h"

#include <algorithm>

namespace kiln::cuda {

namespace {

// sort_kernels.cuh's text as one string literal (its kernels inside KILN_SORT_KERNELS(...)).
#define KILN_SORT_KERNELS(...) #__VA_ARGS__
const char* const kKernels =
#include "codegen_cuda/sort_kernels.cuh"
    ;
#undef KILN_SORT_KERNELS

int64_t key_bytes(SortKey key) { return key == SortKey::Float ? 4 : 8; }

}  // namespace

std::string sort_source(SortKey key) {
  const char* type = key == SortKey::Float ? "float" : key == SortKey::Double ? "double" : "long long";
  return std::string("// kiln's device sort (codegen_cuda/sort_kernels.cuh)\ntypedef ") + type +
         " KEY;\n"
         "#define KILN_KERNEL extern \"C\" __global__ void __launch_bounds__(1024)\n"
         "#define KILN_DEVICE __device__ __forceinline__\n"
         "#define KILN_SMEM(name) extern __shared__ __align__(16) unsigned char name[]\n" +
         kKernels + "\n";
}

SortPlan sort_plan(int64_t n, int64_t lines, SortKey key, int max_tile) {
  SortPlan p;
  if (n < 1 || lines < 1 || max_tile < 2) return p;
  int tile = 2;
  while (tile < max_tile && tile < n) tile *= 2;
  p.tile = tile;
  p.tiles_per_line = (n + tile - 1) / tile;
  p.per_block = p.tiles_per_line == 1 ? static_cast<int>(std::min<int64_t>(max_tile / tile, lines)) : 1;
  p.threads = p.per_block * tile / 2;
  if (lines > (int64_t{1} << 40) / p.tiles_per_line) return p;
  p.tile_blocks = (lines * p.tiles_per_line + p.per_block - 1) / p.per_block;
  if (p.tile_blocks > (int64_t{1} << 31) - 1) return p;
  p.shared_bytes = int64_t{p.per_block} * tile * (8 + key_bytes(key));
  for (int64_t w = tile; w < n; w *= 2) p.merge_widths.push_back(w);
  p.ok = true;
  return p;
}

}  // namespace kiln::cuda
