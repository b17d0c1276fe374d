// kiln/codegen_cuda/cuda_attention_source.h — the fused attention kernel's CUDA C source and its launch shape.
//
// scaled_dot_product_attention on a GPU is a library kernel written in CUDA C
// (codegen_cuda/attention_kernels.cuh), FlashAttention-2's plan on tensor cores: the scores never
// reach memory. One module per element type (f16, bf16) and pair of head dims.
#pragma once

#include "base/dtype.h"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::cuda {

// The widest head dim (query/key and value) the kernel holds in registers.
inline constexpr int64_t kMaxAttentionHeadDim = 128;

// Whether the kernel computes attention of this element type and these head dims: f16 or bf16
// (the tensor cores' types), 1 <= e, ev <= kMaxAttentionHeadDim.
bool attention_kernel_fits(ScalarType dtype, int64_t e, int64_t ev);

// One module of the kernel: its element type and head dims (query and key, value).
struct AttentionModule {
  ScalarType dtype = ScalarType::Half;
  int64_t e = 0, ev = 0;
  auto operator<=>(const AttentionModule&) const = default;
  std::string str() const;  // "f16 64 64", as packages name it
  static std::optional<AttentionModule> parse(std::string_view s);  // str()'s text; nullopt otherwise
};

// The module's source: the kernel kAttentionKernel for `dtype` and head dims e (query, key), ev
// (value), which attention_kernel_fits.
std::string attention_source(ScalarType dtype, int64_t e, int64_t ev);
inline std::string attention_source(const AttentionModule& m) { return attention_source(m.dtype, m.e, m.ev); }

inline constexpr const char* kAttentionKernel = "kiln_attention";
inline constexpr const char* kAttentionCombineKernel = "kiln_attention_combine";  // merges split keys' shares

// Keys a block takes per tile for these head dims (64, or 32 past 64 so that two tiles of keys
// and values fit 48 KB of shared memory), as the kernel's KILN_BN.
int64_t attention_key_tile(int64_t e, int64_t ev);

// How many blocks share each query block's keys: 1 unless the query blocks (`blocks`) leave
// most of the device's `sms` multiprocessors idle, as decoding does (one query row, thousands of
// keys); then enough to fill each SM about twice, with at least two tiles of keys each, at
// most kMaxAttentionSplits.
inline constexpr int64_t kMaxAttentionSplits = 64;
int64_t attention_splits(int64_t blocks, int64_t key_tiles, int sms);

// Query rows a block takes, and its threads (4 warps of 16 rows).
inline constexpr int64_t kAttentionRows = 64;
inline constexpr int kAttentionThreads = 128;

// The batch dims the kernel indexes (innermost last); more are merged or copied by the caller.
inline constexpr int kAttentionBatchDims = 4;

// The kernel's batch argument, laid out as attention_kernels.cuh's KilnAttentionBatch: sizes and
// element strides of q, k, v, the output and the mask per batch dim.
struct AttentionBatch {
  long long rank = 0;
  long long size[kAttentionBatchDims] = {};
  long long q[kAttentionBatchDims] = {}, k[kAttentionBatchDims] = {}, v[kAttentionBatchDims] = {},
            o[kAttentionBatchDims] = {}, m[kAttentionBatchDims] = {};
};

}  // namespace kiln::cuda
