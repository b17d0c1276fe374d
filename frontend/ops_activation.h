// kiln/frontend/ops_activation.h — the Activation family: gelu, silu and torch.nn.functional's
// activations (elu, selu, celu, leaky_relu, hardtanh, relu6, hardswish, hardsigmoid, mish,
// softplus) with its defaults; relu is declared in frontend/ops.h.
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording, resolves defaults and dispatches one composite op: traced, it is
// recorded as a single node that passes/decompose.h expands; eager, its decomposition runs
// prim by prim.
#pragma once

#include "frontend/tensor.h"
#include <string_view>

namespace kiln {

// approximate: "none" (erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);

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

}  // namespace kiln
