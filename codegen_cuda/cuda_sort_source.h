// kiln/codegen_cuda/cuda_sort_source.h — the device sort's CUDA C source and its launch plan.
//
// kiln's argsort on a GPU is a library kernel written in CUDA C (codegen_cuda/sort_kernels.cuh),
// as cuBLASLt and cuDNN are libraries: a line of n keys is cut into tiles that one block each
// sorts in shared memory, and the sorted runs are merged pairwise until one covers the line.
// The kernels compare keys of three types: float (f16, bf16 and f32 are widened to it, as the
// cpu's sort compares them), double, and long long (every integer dtype and bool).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cuda {

enum class SortKey { Float, Double, Int64 };

// The module's source for keys of type `key`: the kernels kSortTiles and kSortMerge.
std::string sort_source(SortKey key);

inline constexpr const char* kSortTiles = "kiln_sort_tiles";
inline constexpr const char* kSortMerge = "kiln_sort_merge";

// The largest tile one block sorts (with tile / 2 threads, tile * (8 + key size) bytes of
// shared memory: 32 KB for 8-byte keys).
inline constexpr int kMaxSortTile = 2048;

// How `lines` lines of n keys (n >= 1) are sorted: each line's tiles of `tile` keys (the power
// of two covering n, at most max_tile), per_block tiles a block (the lines' only tiles packed
// up to max_tile keys a block when a line is one tile, else one); then one merge per width, each
// doubling the sorted runs until they cover a line. ok is false when the launch would not fit
// a grid (more than 2^31 - 1 blocks).
struct SortPlan {
  bool ok = false;
  int tile = 0;
  int per_block = 0;              // tiles a block of the tile kernel sorts
  int threads = 0;                // per block of the tile kernel: per_block * tile / 2
  int64_t tiles_per_line = 0;
  int64_t tile_blocks = 0;        // lines * tiles_per_line / per_block, rounded up
  int64_t shared_bytes = 0;       // of the tile kernel's block
  std::vector<int64_t> merge_widths;  // tile, 2 tile, ... while below n
};
SortPlan sort_plan(int64_t n, int64_t lines, SortKey key, int max_tile = kMaxSortTile);

}  // namespace kiln::cuda
