// kiln/frontend/decompositions_detail.h — internal: the per-op decomposition functions.
//
// One function per op that decomposes (ir/ops.def: every Composite row and every Core row
// shaped by its decomposition), in namespace kiln::decomp, named as the op and defined in its
// family's file: frontend/decompositions_<family>.cpp, or frontend/ops_<family>.cpp where it
// shares helpers with the op's frontend. frontend/decompositions.cpp builds the table indexed
// by OpKind from ops.def. Each receives the node's inputs and attributes through DecompArgs and
// returns the op's result (or results). Not part of the public API.
#pragma once

#include "base/dtype.h"
#include "base/error.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <array>
#include <string_view>
#include <vector>

namespace kiln::decomp {

struct DecompArgs {
  ir::OpKind op;
  const std::vector<Tensor>& inputs;
  const ir::AttrList& attrs;

  const Tensor& in(size_t i) const { return inputs.at(i); }
  // An optional tensor input: null when the node omits it.
  const Tensor* opt(size_t i) const { return i < inputs.size() ? &inputs[i] : nullptr; }
  template <typename T> const T& attr(std::string_view name) const { return attrs.get<T>(op, name); }
};

// The dtype PyTorch computes in for norms, softmax and reductions: f32 for f16/bf16.
inline ScalarType opmath_dtype(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

// ---- shared statistics (frontend/decompositions_moments.cpp) ----
// Sum / mean over `dims`; an empty list reduces nothing (the mean divides by a count that may
// be symbolic, read at run time; an empty count gives NaN).
Tensor sum_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
Tensor mean_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
// The mean and biased variance of x (f32 or f64) over `dims`, both keeping the reduced dims:
// one pass in f64 over shifted data for f32, two passes for f64.
struct Moments {
  Tensor mean, var;
};
Moments moments(const Tensor& x, const std::vector<int64_t>& dims);

// ---- the backward ops' output_mask (ir/ops.def: ATen's bool[3] as 0/1) ----
// The mask as bools; InternalError unless it has three entries.
std::array<bool, 3> output_mask(const DecompArgs& a);
// What a backward op returns for a gradient its mask leaves out: an empty [0] tensor of
// `like`'s dtype and device.
Tensor left_out(const Tensor& like);
// The frontend's view of a backward node's results: undefined where the mask leaves one out.
std::vector<Tensor> masked_results(std::vector<Tensor> r, std::array<bool, 3> mask);

// ---- by family -----------------------------------------------------------------------------
// Activation (frontend/decompositions_activation.cpp)
Tensor gelu(const DecompArgs& a);
Tensor silu(const DecompArgs& a);
Tensor relu(const DecompArgs& a);
Tensor elu(const DecompArgs& a);
Tensor leaky_relu(const DecompArgs& a);
Tensor hardtanh(const DecompArgs& a);
Tensor hardswish(const DecompArgs& a);
Tensor hardsigmoid(const DecompArgs& a);
Tensor mish(const DecompArgs& a);
Tensor softplus(const DecompArgs& a);
// Softmax (frontend/decompositions_softmax.cpp)
Tensor softmax(const DecompArgs& a);
Tensor log_softmax(const DecompArgs& a);
Tensor logsumexp(const DecompArgs& a);
// Moments (frontend/decompositions_moments.cpp)
Tensor mean(const DecompArgs& a);
Tensor var(const DecompArgs& a);
// Norm (frontend/decompositions_norm.cpp; the native_* forms frontend/ops_norm.cpp)
Tensor layer_norm(const DecompArgs& a);
Tensor rms_norm(const DecompArgs& a);
std::vector<Tensor> native_layer_norm(const DecompArgs& a);
std::vector<Tensor> native_group_norm(const DecompArgs& a);
std::vector<Tensor> native_batch_norm(const DecompArgs& a);
std::vector<Tensor> native_layer_norm_backward(const DecompArgs& a);
std::vector<Tensor> native_group_norm_backward(const DecompArgs& a);
// Linear (frontend/decompositions_linear.cpp; pdist and cdist frontend/ops_linear.cpp)
Tensor linear(const DecompArgs& a);
Tensor cross_entropy(const DecompArgs& a);
Tensor matmul(const DecompArgs& a);
Tensor addmm(const DecompArgs& a);
Tensor addmm_activation(const DecompArgs& a);
Tensor baddbmm(const DecompArgs& a);
std::vector<Tensor> cdist(const DecompArgs& a);
std::vector<Tensor> pdist(const DecompArgs& a);
// Pointwise (frontend/decompositions_pointwise.cpp)
Tensor lerp(const DecompArgs& a);
Tensor addcmul(const DecompArgs& a);
Tensor addcdiv(const DecompArgs& a);
Tensor nan_to_num(const DecompArgs& a);
Tensor tril(const DecompArgs& a);
Tensor triu(const DecompArgs& a);
// Pool (frontend/ops_pool.cpp; col2im frontend/ops_pool_fold.cpp)
std::vector<Tensor> max_pool2d_with_indices(const DecompArgs& a);
std::vector<Tensor> max_pool3d_with_indices(const DecompArgs& a);
std::vector<Tensor> avg_pool2d(const DecompArgs& a);
std::vector<Tensor> avg_pool3d(const DecompArgs& a);
std::vector<Tensor> adaptive_avg_pool2d(const DecompArgs& a);
std::vector<Tensor> adaptive_avg_pool3d(const DecompArgs& a);
std::vector<Tensor> col2im(const DecompArgs& a);
std::vector<Tensor> max_pool2d_with_indices_backward(const DecompArgs& a);
std::vector<Tensor> avg_pool2d_backward(const DecompArgs& a);
std::vector<Tensor> adaptive_avg_pool2d_backward(const DecompArgs& a);
// Resample (frontend/ops_resample.cpp)
std::vector<Tensor> grid_sampler_2d(const DecompArgs& a);
std::vector<Tensor> upsample_nearest2d(const DecompArgs& a);
std::vector<Tensor> upsample_bilinear2d(const DecompArgs& a);
std::vector<Tensor> reflection_pad1d(const DecompArgs& a);
std::vector<Tensor> reflection_pad2d(const DecompArgs& a);
std::vector<Tensor> reflection_pad3d(const DecompArgs& a);
std::vector<Tensor> replication_pad1d(const DecompArgs& a);
std::vector<Tensor> replication_pad2d(const DecompArgs& a);
std::vector<Tensor> replication_pad3d(const DecompArgs& a);
// Index (frontend/ops_index.cpp, frontend/ops_index_scatter.cpp)
std::vector<Tensor> embedding(const DecompArgs& a);
std::vector<Tensor> embedding_bag(const DecompArgs& a);
std::vector<Tensor> embedding_dense_backward(const DecompArgs& a);
std::vector<Tensor> index(const DecompArgs& a);
std::vector<Tensor> index_put(const DecompArgs& a);
std::vector<Tensor> masked_scatter(const DecompArgs& a);
std::vector<Tensor> slice_scatter(const DecompArgs& a);
std::vector<Tensor> select_scatter(const DecompArgs& a);
// Cast (frontend/ops_cast.cpp)
std::vector<Tensor> no_grad_copy(const DecompArgs& a);
// Conv (frontend/ops_conv.cpp)
std::vector<Tensor> convolution_backward(const DecompArgs& a);
std::vector<Tensor> convolution_backward_weight(const DecompArgs& a);
// Sort (frontend/ops_sort.cpp)
std::vector<Tensor> sort(const DecompArgs& a);
std::vector<Tensor> topk(const DecompArgs& a);
// Rearrange (frontend/ops_rearrange.cpp)
std::vector<Tensor> flip(const DecompArgs& a);
std::vector<Tensor> repeat(const DecompArgs& a);
// Attention (frontend/ops_attention.cpp)
std::vector<Tensor> scaled_dot_product_attention(const DecompArgs& a);
std::vector<Tensor> scaled_dot_product_attention_backward(const DecompArgs& a);
// The math of attention's backward (FlashAttention's, with the probabilities in memory), in f32
// for f16/bf16: the gradients of q, k, v (the batch dims broadcast, the query's dtype) and dS, the
// scores' gradient, which is an added mask's (the computing dtype, [..., L, S]).
struct AttentionBackwardMath {
  Tensor dq, dk, dv, ds;
};
AttentionBackwardMath attention_backward_math(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                              const Tensor& o, const Tensor* mask, bool is_causal, double scale);
// Dropout (frontend/ops_dropout.cpp)
std::vector<Tensor> native_dropout(const DecompArgs& a);

}  // namespace kiln::decomp
