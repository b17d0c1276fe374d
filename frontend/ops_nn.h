// kiln/frontend/ops_nn.h — neural-network ops recorded as composite nodes: softmax,
// log_softmax, layer_norm, rms_norm, gelu, silu, the activations (elu, selu, celu, leaky_relu,
// hardtanh, relu6, hardswish, hardsigmoid, mish, softplus), var (and std over it), linear, cross_entropy.
//
// Names, argument order, defaults and semantics follow libtorch (at::softmax, at::layer_norm,
// torch::nn::functional::cross_entropy, ...). Each validates its arguments with PyTorch's
// wording, resolves defaults (dims normalized, dtype and eps filled in) and dispatches one
// composite op: traced, it is recorded as a single node that passes/decompose.h expands;
// eager, its decomposition (passes/decompositions*.cpp) runs prim by prim. relu, mean and
// matmul, also composites, are declared in frontend/ops.h.
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace kiln {

// dtype, when given, casts the input first (as torch.softmax's dtype argument).
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

// Normalizes over the trailing dims named by normalized_shape. A missing (or undefined)
// weight or bias is skipped.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// eps defaults to torch.finfo(input.dtype).eps.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);

// approximate: "none" (erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);

// ---- activations (frontend/ops_activation.cpp), torch.nn.functional's defaults ----
// scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1).
Tensor elu(const Tensor& self, double alpha = 1.0, double scale = 1.0, double input_scale = 1.0);
Tensor selu(const Tensor& self);                     // elu with PyTorch's fixed alpha and scale
Tensor celu(const Tensor& self, double alpha = 1.0);  // elu(x, alpha, 1, 1 / alpha); alpha != 0
Tensor leaky_relu(const Tensor& self, double negative_slope = 0.01);
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor relu6(const Tensor& self);  // hardtanh(x, 0, 6)
Tensor hardswish(const Tensor& self);
Tensor hardsigmoid(const Tensor& self);
Tensor mish(const Tensor& self);
// log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
Tensor softplus(const Tensor& self, double beta = 1.0, double threshold = 20.0);

// Variance over dims ({} means every dim); correction defaults to 1 (Bessel's correction).
Tensor var(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt,
           bool keepdim = false);
// Variance over every dim (unbiased: correction 1, else 0). A template that takes exactly
// `bool`: a braced dim list (`var(x, {1})`) then selects the dims overload above instead of
// converting 1 to `unbiased` (with no default template argument, which would be used when
// the braced list leaves Bool undeduced).
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
Tensor var(const Tensor& self, Bool unbiased) {
  return var(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}
inline Tensor var(const Tensor& self) { return var(self, true); }
// Standard deviation: sqrt(var) with the same arguments.
Tensor std(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt,
           bool keepdim = false);
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
Tensor std(const Tensor& self, Bool unbiased) {
  return std(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}
inline Tensor std(const Tensor& self) { return std(self, true); }

// input @ weight^T + bias; weight is [out_features, in_features].
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

// Zeroes each element with probability p (Philox draws, frontend/random.h) and scales the rest
// by 1 / (1 - p) when `train`; the input itself otherwise. Floating inputs only.
Tensor dropout(const Tensor& input, double p, bool train);
// (output, bool keep-mask) as at::native_dropout; train false (or p = 0): the input and all-true.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train);

// The p-norm distances between the rows of input [N, M], pairs i < j in row-major order:
// [N * (N - 1) / 2], as torch.pdist.
Tensor pdist(const Tensor& input, double p = 2.0);

// softmax(q k^T * scale + mask) v over query [..., L, E], key [..., S, E], value [..., S, Ev].
// attn_mask: bool (true = attend) or the query's dtype (added), broadcast to [..., L, S];
// is_causal: query i attends to keys j <= i (no attn_mask then); scale: 1 / sqrt(E) by default;
// enable_gqa: key and value heads (dim -3) are shared by query heads in groups. A query row
// whose keys are all masked gives zeros, as PyTorch's math kernel does.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

// Cross entropy of logits [N, C] or [C] (or [N, C, d1, ...]) against int64 class indices.
// reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     std::string_view reduction = "mean", int64_t ignore_index = -100, double label_smoothing = 0.0);

}  // namespace kiln
