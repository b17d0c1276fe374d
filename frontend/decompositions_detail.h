// kiln/frontend/decompositions_detail.h — internal: the per-op decomposition functions.
//
// One function per composite op, defined in frontend/decompositions_nn.cpp (softmax,
// log_softmax, logsumexp, layer_norm, rms_norm, gelu, silu, relu, mean, var),
// frontend/decompositions_linear.cpp (matmul, addmm, baddbmm, linear, cross_entropy),
// frontend/decompositions_activation.cpp and frontend/decompositions_pointwise.cpp; frontend/decompositions.cpp
// puts them in the table indexed by OpKind. Each receives the node's inputs and attributes
// through DecompArgs and returns the op's single result. Not part of the public API.
#pragma once

#include "base/dtype.h"
#include "base/error.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

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

// The mean and biased variance of x (f32 or f64) over `dims`, both keeping the reduced dims:
// one pass in f64 over shifted data for f32, two passes for f64 (frontend/decompositions_nn.cpp).
struct Moments {
  Tensor mean, var;
};
Moments moments(const Tensor& x, const std::vector<int64_t>& dims);

Tensor softmax(const DecompArgs& a);
Tensor log_softmax(const DecompArgs& a);
Tensor layer_norm(const DecompArgs& a);
Tensor rms_norm(const DecompArgs& a);
Tensor gelu(const DecompArgs& a);
Tensor silu(const DecompArgs& a);
Tensor relu(const DecompArgs& a);
Tensor mean(const DecompArgs& a);
Tensor var(const DecompArgs& a);
Tensor linear(const DecompArgs& a);
Tensor cross_entropy(const DecompArgs& a);
Tensor matmul(const DecompArgs& a);
Tensor addmm(const DecompArgs& a);
Tensor baddbmm(const DecompArgs& a);
Tensor logsumexp(const DecompArgs& a);
// frontend/decompositions_activation.cpp
Tensor elu(const DecompArgs& a);
Tensor leaky_relu(const DecompArgs& a);
Tensor hardtanh(const DecompArgs& a);
Tensor hardswish(const DecompArgs& a);
Tensor hardsigmoid(const DecompArgs& a);
Tensor mish(const DecompArgs& a);
Tensor softplus(const DecompArgs& a);
// Core ops shaped by their decomposition (ir/ops.def), each defined beside its API function:
// frontend/ops_pool.cpp, ops_norm.cpp, ops_index.cpp, ops_sort.cpp, ops_resample.cpp,
// ops_fold.cpp, ops_scatter.cpp, ops_rearrange.cpp, ops_linalg.cpp, ops_nn.cpp.
std::vector<Tensor> max_pool2d_with_indices(const DecompArgs& a);
std::vector<Tensor> max_pool3d_with_indices(const DecompArgs& a);
std::vector<Tensor> avg_pool2d(const DecompArgs& a);
std::vector<Tensor> avg_pool3d(const DecompArgs& a);
std::vector<Tensor> adaptive_avg_pool2d(const DecompArgs& a);
std::vector<Tensor> adaptive_avg_pool3d(const DecompArgs& a);
std::vector<Tensor> native_layer_norm(const DecompArgs& a);
std::vector<Tensor> native_group_norm(const DecompArgs& a);
std::vector<Tensor> embedding(const DecompArgs& a);
std::vector<Tensor> sort(const DecompArgs& a);
std::vector<Tensor> topk(const DecompArgs& a);
std::vector<Tensor> grid_sampler_2d(const DecompArgs& a);
std::vector<Tensor> col2im(const DecompArgs& a);
std::vector<Tensor> masked_scatter(const DecompArgs& a);
std::vector<Tensor> slice_scatter(const DecompArgs& a);
std::vector<Tensor> select_scatter(const DecompArgs& a);
std::vector<Tensor> flip(const DecompArgs& a);
std::vector<Tensor> repeat(const DecompArgs& a);
std::vector<Tensor> reflection_pad1d(const DecompArgs& a);
std::vector<Tensor> reflection_pad2d(const DecompArgs& a);
std::vector<Tensor> reflection_pad3d(const DecompArgs& a);
std::vector<Tensor> replication_pad1d(const DecompArgs& a);
std::vector<Tensor> replication_pad2d(const DecompArgs& a);
std::vector<Tensor> replication_pad3d(const DecompArgs& a);
std::vector<Tensor> cdist(const DecompArgs& a);
std::vector<Tensor> pdist(const DecompArgs& a);
std::vector<Tensor> scaled_dot_product_attention(const DecompArgs& a);
std::vector<Tensor> native_batch_norm(const DecompArgs& a);
std::vector<Tensor> native_dropout(const DecompArgs& a);
std::vector<Tensor> index(const DecompArgs& a);
std::vector<Tensor> index_put(const DecompArgs& a);
std::vector<Tensor> embedding_bag(const DecompArgs& a);
std::vector<Tensor> upsample_nearest2d(const DecompArgs& a);
std::vector<Tensor> upsample_bilinear2d(const DecompArgs& a);

// frontend/decompositions_pointwise.cpp
Tensor lerp(const DecompArgs& a);
Tensor addcmul(const DecompArgs& a);
Tensor addcdiv(const DecompArgs& a);
Tensor nan_to_num(const DecompArgs& a);
Tensor tril(const DecompArgs& a);
Tensor triu(const DecompArgs& a);

}  // namespace kiln::decomp
