// kiln/frontend/promotion.cpp — result_type and can_cast, as PyTorch's ResultTypeState.
//
// Operands fall in three priority groups, each promoted within itself with promote_types:
// tensors with at least one dim (dimResult), 0-dim tensors (zeroResult) and wrapped numbers,
// i.e. Scalars (wrappedResult; a floating scalar counts as the default dtype). The groups are
// then combined from lowest to highest priority with combine_categories: a lower group only
// matters when it is of a higher category (bool < integral < floating) than the higher one.
// This is at::native::result_type (aten/src/ATen/native/TypeProperties.cpp) minus complex.
#include "frontend/promotion.h"

#include "base/error.h"

#include <optional>

namespace kiln {

namespace {

using MaybeType = std::optional<ScalarType>;

struct ResultTypeState {
  MaybeType dim_result;
  MaybeType zero_result;
  MaybeType wrapped_result;
};

MaybeType promote_skip_undefined(MaybeType a, MaybeType b) {
  if (!a) return b;
  if (!b) return a;
  return promote_types(*a, *b);
}

// `higher` comes from the higher-priority group. Its category wins unless `lower` is of a
// strictly higher category: a floating `higher` always wins; a bool `higher` or a floating
// `lower` promotes both.
MaybeType combine_categories(MaybeType higher, MaybeType lower) {
  if (higher && is_floating_point(*higher)) return higher;
  if ((higher && *higher == ScalarType::Bool) || (lower && is_floating_point(*lower))) {
    return promote_skip_undefined(higher, lower);
  }
  if (higher) return higher;
  return lower;
}

void update(ResultTypeState& state, const Tensor& t) {
  if (!t.defined()) return;
  ScalarType current = t.dtype();
  if (t.dim() > 0) {
    state.dim_result = promote_skip_undefined(state.dim_result, current);
  } else {
    state.zero_result = promote_skip_undefined(state.zero_result, current);
  }
}

void update(ResultTypeState& state, const Scalar& s) {
  ScalarType current = s.type();
  if (is_floating_point(current)) current = get_default_dtype();
  state.wrapped_result = promote_skip_undefined(state.wrapped_result, current);
}

ScalarType finish(const ResultTypeState& state) {
  MaybeType r = combine_categories(state.dim_result, combine_categories(state.zero_result, state.wrapped_result));
  if (!r) fail("result_type", "expected at least one tensor or scalar operand");
  return *r;
}

}  // namespace

ScalarType result_type(const std::vector<TensorOrScalar>& operands) {
  ResultTypeState state;
  for (const TensorOrScalar& op : operands) {
    if (const Tensor* t = std::get_if<Tensor>(&op)) {
      update(state, *t);
    } else {
      update(state, std::get<Scalar>(op));
    }
  }
  return finish(state);
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState state;
  update(state, a);
  update(state, b);
  return finish(state);
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState state;
  update(state, a);
  update(state, b);
  return finish(state);
}

ScalarType result_type(const Scalar& a, const Tensor& b) { return result_type(b, a); }

ScalarType result_type(const Scalar& a, const Scalar& b) {
  ResultTypeState state;
  update(state, a);
  update(state, b);
  return finish(state);
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && is_integral(to, /*include_bool=*/false)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace kiln
