// kiln/frontend/ops_dropout.cpp — the Dropout family (frontend/ops_dropout.h): dropout and
// native_dropout, native_dropout's decomposition (Philox draws, frontend/ops_random.h), and
// channel-wise dropout written with dropout's mask.
#include "frontend/ops_dropout.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/symbolic.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_random.h"
#include "ir/shape_env.h"

#include <tuple>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

void check_probability(std::string_view op, double p) {
  if (!(p >= 0 && p <= 1)) fail(op, "dropout probability has to be between 0 and 1, but got {}", p);
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  check_probability("dropout", p);
  if (!is_floating_point(input.dtype()))
    fail("dropout", "expected a floating-point input, but got {}", c10_type_name(input.dtype()));
  if (!train || p == 0) return input;
  return std::get<0>(native_dropout(input, p, true));
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  check_probability("native_dropout", p);
  // Evaluation copies any dtype (as PyTorch does); drawing a mask needs a floating input.
  const bool training = train.value_or(true);
  if (training && !is_floating_point(input.dtype()))
    fail("native_dropout", "expected a floating-point input, but got {}", c10_type_name(input.dtype()));
  // The draw's (seed, offset) is taken now, as the eager op's; a compiled program draws anew
  // on every call (runtime/program.cpp).
  Generator& g = default_generator();
  const auto seed = static_cast<int64_t>(g.seed());
  const int64_t offset = training && p > 0 && p < 1 ? static_cast<int64_t>(g.next_offset()) : 0;
  std::vector<Tensor> r = dispatch(OpCall{OpKind::native_dropout, {input}, ir::AttrList({p, training, seed, offset})});
  return {r.at(0), r.at(1)};
}

namespace {

// ATen's _dropout_impl<feature_dropout = true>, with its checks in its order: p = 1 returns
// input * 0 before the rank and the dtype are checked (any dtype), and those are checked only
// when a mask is drawn. Sizes stay symbolic: the emptiness test is a guard, and the mask is
// native_dropout's keep-mask over a [N, C, 1, ...] slice of the input (its values are not read),
// divided by 1 - p in the input's dtype as ATen divides its noise (1.0f / float(1 - p) for f32,
// where dropout's mask multiplies by float(1 / (1 - p))).
Tensor channel_dropout(std::string_view op, const Tensor& input, double p, bool train) {
  check_probability(op, p);
  if (p == 0 || !train || ir::sym_eq(sym_numel(input), ir::Expr(0))) return input;
  if (p == 1) return input * zeros({}, input.options());  // inf and NaN stay NaN
  if (input.dim() < 2) fail(op, "Feature dropout requires at least 2 dimensions in the input");
  if (!is_floating_point(input.dtype()))
    fail(op, "result type Float can't be cast to the desired output type {}", c10_type_name(input.dtype()));
  Tensor slice = input;
  for (int64_t d = 2; d < input.dim(); ++d) slice = slice.narrow(d, 0, 1);
  const Tensor keep = std::get<1>(native_dropout(slice, p, true));
  return input * div(keep.to(input.dtype()), 1 - p);
}

// PyTorch's Python wrappers test p < 0 or p > 1, which a NaN passes (the rank is checked first,
// then ATen refuses the NaN).
void check_wrapper_probability(std::string_view op, double p) {
  if (p < 0 || p > 1) fail(op, "dropout probability has to be between 0 and 1, but got {}", p);
}

// An unbatched input run as a batch of one.
Tensor unbatched(std::string_view op, const Tensor& input, double p, bool train) {
  return channel_dropout(op, input.unsqueeze(0), p, train).squeeze(0);
}

}  // namespace

Tensor feature_dropout(const Tensor& input, double p, bool train) { return channel_dropout("feature_dropout", input, p, train); }

Tensor dropout1d(const Tensor& input, double p, bool train) {
  check_wrapper_probability("dropout1d", p);
  const int64_t d = input.dim();
  if (d != 2 && d != 3)
    fail("dropout1d",
         "dropout1d: Expected 2D or 3D input, but received a {}D input. Note that dropout1d exists to provide channel-wise "
         "dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
         "inputs).",
         d);
  return d == 3 ? channel_dropout("dropout1d", input, p, train) : unbatched("dropout1d", input, p, train);
}

Tensor dropout2d(const Tensor& input, double p, bool train) { return channel_dropout("dropout2d", input, p, train); }

Tensor dropout3d(const Tensor& input, double p, bool train) {
  check_wrapper_probability("dropout3d", p);
  return input.dim() == 5 ? channel_dropout("dropout3d", input, p, train) : unbatched("dropout3d", input, p, train);
}

namespace decomp {

std::vector<Tensor> native_dropout(const DecompArgs& a) {
  const Tensor& input = a.in(0);
  const double p = a.attr<double>("p");
  // Nothing dropped (evaluation or p = 0): a copy and an all-true mask.
  if (!a.attr<bool>("train") || p == 0) return {input.clone(), ones_like(input, TensorOptions(ScalarType::Bool))};
  if (p == 1) return {input * 0, zeros_like(input, TensorOptions(ScalarType::Bool))};  // inf and NaN stay NaN
  const ScalarType acc = opmath_dtype(input.dtype());
  const Tensor u = dispatch1(OpKind::uniform, {},
                             {sym_sizes(input), 0.0, 1.0, a.attr<int64_t>("seed"), a.attr<int64_t>("offset"), acc,
                              input.device()});
  const Tensor keep = lt(u, 1 - p);
  // The scale in the compute dtype (a Scalar pair would make an f32 mask and round an f64 scale).
  const Tensor scale = where(keep, scalar_tensor(1 / (1 - p), TensorOptions(acc).device(input.device())), Scalar(0.0));
  return {(input.to(acc) * scale).to(input.dtype()), keep};
}

}  // namespace decomp

}  // namespace kiln
