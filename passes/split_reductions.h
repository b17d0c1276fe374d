// kiln/passes/split_reductions.h — split_reductions: a reduction with few results and long rows
// becomes two, so that a GPU has enough blocks or threads to reach its memory bandwidth.
//
// Before and after: prims. A sum, prod, amax, amin, any or all over one run of consecutive dims,
// with static sizes, whose results are too few to fill the device — K results, each reducing L
// elements — is rewritten as
//
//   p = reduce(reshape(x, [..., C, L / C, ...]), dim of the L / C)   (K * C results: partials)
//   y = reduce(p, dim of the C)                                       (in a fixed order)
//
// with C a power of two dividing L. Float sums and products take their partials in f64 (the
// kernels' accumulator), so the result rounds once, as before. The device is filled when:
//   a row reduction (the run is innermost; one block per result) has K * C >= 4 blocks per
//   multiprocessor, each chunk at least kMinRowChunk elements; once split, its chunks are cut
//   to at most kMaxRowChunk, so that a thread's items unroll (few long rows: [16, 4194304]
//   took 64 chunks of 65536, 64 items a thread, and reached 55% of the copy rate on an H200);
//   a column reduction (dims after the run; one thread per result, up to 8 sharing its rows)
//   has K * C >= 256 threads per multiprocessor, each chunk at least kMinColumnChunk rows.
// Rows shorter than two chunks of kMinRowChunk stay whole: a row kernel that also normalizes
// (layer_norm of [64, 8192]) would otherwise become several kernels reading its rows again.
// A reduction to one value (K = 1) is left to fusion, which splits it by itself
// (passes/fuse.h). The chunking depends on the multiprocessor count only, never on the data:
// results are deterministic. The cuda backend runs it before fusion; a symbolic size keeps the
// reduction as it is.
#pragma once

#include "ir/graph.h"
#include "passes/schedule.h"

#include <cstdint>

namespace kiln::passes {

inline constexpr int64_t kMinRowChunk = 16384;
inline constexpr int64_t kMaxRowChunk = 32768;  // a split row's chunks: 32 unrolled items a thread of 1024
inline constexpr int64_t kMinColumnChunk = 64;
// The multiprocessors assumed when the target does not say (no driver: plans made for a GPU
// elsewhere): an H100's 132.
inline constexpr int64_t kAssumedSms = 132;

bool split_reductions(ir::Graph& g, const ScheduleTarget& t);

}  // namespace kiln::passes
