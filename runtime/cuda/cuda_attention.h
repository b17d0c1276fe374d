// kiln/runtime/cuda/cuda_attention.h — scaled_dot_product_attention on cuda tensors, on kiln's fused kernel (codegen_cuda/cuda_attention_source.h).
//
// f16 and bf16 attention with head dims up to 128 runs as one kernel that never writes the
// scores: compiled programs (the cuda backend keeps the op whole where the kernel fits, and its
// step calls this) and eager calls alike. q, k and v may be views whose last dim is contiguous
// (a [B, L, H, E] projection transposed to [B, H, L, E] is read in place); batch dims broadcast as
// the decomposition's products do; the mask (bool, or added values of the query's dtype) may be
// any broadcast view. The kernel comes from an exported package that carries it
// (use_attention_images), the compile cache or NVRTC, once per (device, dtype, head dims); with
// none of these the call returns false and the caller runs the decomposition. Its backward
// (scaled_dot_product_attention_backward) runs the same way on kernels of a module of its own.
#pragma once

#include "codegen_cuda/cuda_attention_source.h"
#include "frontend/tensor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::rt {

// out (the op's result: [batch..., L, Ev], on the inputs' device) = attention of ins = {query, key,
// value[, attn_mask]}. False, with nothing written, when the fused kernel does not fit (dtype,
// head dims) or cannot be had.
bool cuda_attention(const std::vector<Tensor>& ins, bool is_causal, double scale, const Tensor& out);

// outs = {dq, dk, dv} (the results of scaled_dot_product_attention_backward: the broadcast batch
// dims, the query's dtype) from ins = {grad_out, query, key, value, out[, attn_mask]}, on the
// fused backward kernels, which never write the probabilities. False, with nothing written, when
// they do not fit or cannot be had, as for cuda_attention.
bool cuda_attention_backward(const std::vector<Tensor>& ins, bool is_causal, double scale,
                             const std::vector<Tensor>& outs);

// The fused kernels' modules a loaded package carries for `device` (images by module, as
// runtime/export/cuda_code.h reads them), used before the compile cache and NVRTC.
void use_attention_images(int device, const std::vector<std::pair<cuda::AttentionModule, std::string>>& images);

// Launches of the fused kernel in this process (tests tell it from the decomposition with it).
int64_t attention_kernel_launches();
int64_t attention_backward_kernel_launches();

}  // namespace kiln::rt
