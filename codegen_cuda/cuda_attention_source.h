// kiln/codegen_cuda/cuda_attention_source.h — the fused attention kernel's CUDA C source and its launch shape.
//
// scaled_dot_product_attention on a GPU is a library kernel written in CUDA C
// (codegen_cuda/attention_kernels.cuh), FlashAttention-2's plan on tensor cores: the scores never
// reach memory. One module per element type (f16, bf16) and pair of head dims; the backward's
// kernels (codegen_cuda/attention_backward_kernels.cuh) are a module of their own, so that
// inference never compiles them.
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

// One module of the kernels: its element type and head dims (query and key, value), and whether
// it is the backward's.
struct AttentionModule {
  ScalarType dtype = ScalarType::Half;
  int64_t e = 0, ev = 0;
  bool backward = false;
  auto operator<=>(const AttentionModule&) const = default;
  std::string str() const;  // "f16 64 64" (or "f16 64 64 backward"), as packages name it
  static std::optional<AttentionModule> parse(std::string_view s);  // str()'s text; nullopt otherwise
};

// The module's source, for `dtype` and head dims e (query, key), ev (value), which
// attention_kernel_fits: the forward (kAttentionKernel, kAttentionCombineKernel) or the backward
// (kAttentionLseKernel, kAttentionBackwardPrepKernel, kAttentionBackwardKernel,
// kAttentionBackwardDqKernel).
std::string attention_source(const AttentionModule& m);

inline constexpr const char* kAttentionKernel = "kiln_attention";
inline constexpr const char* kAttentionCombineKernel = "kiln_attention_combine";  // merges split keys' shares
inline constexpr const char* kAttentionLseKernel = "kiln_attention_lse";  // each query row's log-sum-exp
inline constexpr const char* kAttentionBackwardPrepKernel = "kiln_attention_backward_prep";  // rowsum(g * out)
inline constexpr const char* kAttentionBackwardKernel = "kiln_attention_backward";  // dK, dV; dQ added up
inline constexpr const char* kAttentionBackwardDqKernel = "kiln_attention_backward_dq";  // dQ rounded

// The backward's tiles: keys a block (4 warps of 16) and queries a step (64, or 32 past head
// dims of 64, so that the query tile, the output gradient's, the keys and dS^T fit 48 KB of
// shared memory), as the kernel's KILN_KEYS and KILN_BR.
inline constexpr int64_t kAttentionBackwardKeys = 64;
int64_t attention_backward_query_tile(int64_t e, int64_t ev);

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
