// kiln/frontend/ops_activation.h — the Activation family: gelu, silu and torch.nn.functional's
// activations (elu, selu, celu, leaky_relu, hardtanh, relu6, hardswish, hardsigmoid, mish,
// softplus, softsign, tanhshrink, hardshrink, softshrink, threshold, glu, prelu, rrelu) with
// its defaults; relu is declared in frontend/ops.h.
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording and resolves defaults. Those up to softplus dispatch one composite op:
// traced, it is recorded as a single node that passes/decompose.h expands; eager, its
// decomposition runs prim by prim. The rest are written in the frontend with the ops they are
// made of (frontend/ops_activation_composed.cpp), so a trace records those ops, and autograd,
// fusion and every backend take them as they are.
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

// x / (1 + |x|), as torch.nn.functional.softsign writes it (an integer input gives floats).
Tensor softsign(const Tensor& self);
// x - tanh(x), as torch.nn.functional.tanhshrink writes it.
Tensor tanhshrink(const Tensor& self);
// 0 where -lambd <= x <= lambd, else x (NaN passes). Floating inputs.
Tensor hardshrink(const Tensor& self, const Scalar& lambd = 0.5);
// x - lambd above lambd, x + lambd below -lambd, x * 0 between (NaN passes); lambd in
// [0, the dtype's largest value]. Floating inputs.
Tensor softshrink(const Tensor& self, const Scalar& lambd = 0.5);
// value where x <= threshold, else x; both converted to x's dtype first (for an integer x,
// threshold 1.5 is 1), as ATen's kernel compares. Not for bool.
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value);
// a * sigmoid(b), a and b the two halves of dim (its size must be even). Floating inputs;
// f16 and bf16 computed in f32 and rounded once.
Tensor glu(const Tensor& self, int64_t dim = -1);
// x where x > 0, else weight * x: weight has one element, or one per channel (dim 1; a 1-D
// input has one channel), and the input's dtype.
Tensor prelu(const Tensor& self, const Tensor& weight);
// Randomized leaky relu: in training, each negative x is multiplied by a slope drawn from
// U(lower, upper) (Philox draws, frontend/ops_random.h); otherwise leaky_relu with slope
// (lower + upper) / 2. Floating inputs; lower <= upper.
Tensor rrelu(const Tensor& self, const Scalar& lower = 1.0 / 8, const Scalar& upper = 1.0 / 3, bool training = false);

}  // namespace kiln
