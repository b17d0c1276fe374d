// kiln/frontend/ops_ternary.cpp — the Ternary family's frontend: where and clamp (clamp_min /
// clamp_max: one scalar bound).
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/operands.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

Tensor where_impl(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b) {
  if (cond.dtype() != ScalarType::Bool) {
    fail("where", "expected condition to be a boolean tensor, but got a tensor with dtype {}", c10_type_name(cond.dtype()));
  }
  ScalarType dt = result_type({a, b});
  Device device = common_device("where", {cond, a, b});
  // Broadcast all three; the condition keeps its dtype.
  std::vector<const Tensor*> ts{&cond};
  for (const TensorOrScalar* o : {&a, &b})
    if (const Tensor* t = std::get_if<Tensor>(o)) ts.push_back(t);
  const BroadcastShape shape("where", ts);
  auto prep = [&](const TensorOrScalar& o) {
    Tensor t = std::holds_alternative<Tensor>(o) ? std::get<Tensor>(o).to(dt)
                                                 : wrapped_number(std::get<Scalar>(o), dt, device);
    return shape.expand(t);
  };
  Tensor c = shape.expand(cond);
  return dispatch1(OpKind::where, {c, prep(a), prep(b)});
}

// clamp over its operands (NaN in the input or a bound propagates, as in PyTorch).
Tensor clamp_impl(const std::vector<TensorOrScalar>& operands, bool has_min, bool has_max) {
  if (!has_min && !has_max) fail("clamp", "At least one of 'min' or 'max' must not be None");
  ScalarType dt = result_type(operands);
  if (dt == ScalarType::Bool) {
    // PyTorch: one tensor bound runs maximum/minimum, which bool supports; its clamp kernels
    // (both bounds, or a scalar bound) are not instantiated for bool.
    const bool scalar_bound = std::any_of(operands.begin() + 1, operands.end(),
                                          [](const TensorOrScalar& o) { return std::holds_alternative<Scalar>(o); });
    if (scalar_bound || (has_min && has_max)) {
      const char* kernel = !scalar_bound ? "clamp_cpu"
                           : has_min && has_max ? "clamp_scalar_cpu"
                           : has_min            ? "clamp_min_scalar_cpu"
                                                : "clamp_max_scalar_cpu";
      fail("clamp", "\"{}\" not implemented for 'Bool'", kernel);
    }
  }
  std::vector<TensorOrScalar> bounded = operands;
  for (size_t i = 1; i < bounded.size(); ++i) {
    Scalar* bound = std::get_if<Scalar>(&bounded[i]);
    if (!bound) continue;
    const bool is_min = has_min && i == 1;
    if (is_integral(dt, /*include_bool=*/false) && !bound->is_floating_point()) {
      // PyTorch's integer clamp: a bound past the dtype's range on its own side is no bound (a
      // u8 clamp's min of -3 is 0, an i8's max of 128 is 127); a min above the range or a max
      // below it cannot be met and is an error.
      const int64_t v = bound->to_int(), lo = iinfo_min(dt), hi = iinfo_max(dt);
      if (is_min ? v > hi : v < lo)
        fail("clamp", "Clamp {} value {} is outside the representable range of {} [{}, {}]", is_min ? "min" : "max", v,
             dtype_name(dt), lo, hi);
      *bound = Scalar(std::clamp(v, lo, hi));
    }
    check_scalar_fits("clamp", *bound, dt);  // other bounds convert checked, as PyTorch's clamp
  }
  // PyTorch's gradient at a tie tells a scalar bound from a tensor one: against a scalar bound
  // x gets nothing, against a tensor bound x and the bound share it (also when the bound does
  // not require grad). So scalar bounds record the clamp prim, whose rule gives x nothing at a
  // tie (a missing bound is the dtype's extreme), and tensor bounds record maximum and
  // minimum, which share a tie. The values are the same: clamp is min(max(x, lo), hi), NaN
  // propagating.
  const bool scalar_bounds = std::holds_alternative<Scalar>(bounded.at(1));
  if (scalar_bounds) {
    std::vector<TensorOrScalar> full = bounded;
    const double inf = std::numeric_limits<double>::infinity();
    const Scalar lowest = is_floating_point(dt) ? Scalar(-inf) : Scalar(iinfo_min(dt));
    const Scalar highest = is_floating_point(dt) ? Scalar(inf) : Scalar(iinfo_max(dt));
    if (!has_min) full.insert(full.begin() + 1, lowest);
    if (!has_max) full.push_back(highest);
    std::vector<Tensor> ops = promote_and_broadcast("clamp", full, dt);
    return dispatch1(OpKind::clamp, {ops[0], ops[1], ops[2]});
  }
  std::vector<Tensor> ops = promote_and_broadcast("clamp", operands, dt);
  Tensor out = ops[0];
  if (has_min) out = dispatch1(OpKind::maximum, {out, ops[1]});
  if (has_max) out = dispatch1(OpKind::minimum, {out, ops[has_min ? 2 : 1]});
  return out;
}

}  // namespace

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  return where_impl(condition, self, other);
}

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  std::vector<TensorOrScalar> operands{self};
  if (min) operands.emplace_back(*min);
  if (max) operands.emplace_back(*max);
  return clamp_impl(operands, min.has_value(), max.has_value());
}

Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  bool has_min = min && min->defined();
  bool has_max = max && max->defined();
  std::vector<TensorOrScalar> operands{self};
  if (has_min) operands.emplace_back(*min);
  if (has_max) operands.emplace_back(*max);
  return clamp_impl(operands, has_min, has_max);
}

Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp(self, min, max);
}

Tensor clip(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return clamp(self, min, max);
}

Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp(self, std::optional<Scalar>(min), std::nullopt); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp(self, std::nullopt, std::optional<Scalar>(max)); }

}  // namespace kiln
