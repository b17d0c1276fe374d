// kiln/runtime/interpreter/interp_ternary.cpp — the Ternary family's reference kernels.
//
// where(cond, a, b) selects per element; clamp(x, lo, hi) = min(max(x, lo), hi) with NaN
// propagating from x and from either bound (PyTorch's clamp with tensor bounds) and hi winning
// when lo > hi.
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

// clamp on compute types. std::max(x, lo) returns x when x is NaN (no comparison holds), and
// std::min then returns it too, so NaN in x propagates; NaN bounds are checked first.
struct Clamp {
  template <typename C> C operator()(C x, C lo, C hi) const {
    if constexpr (std::is_floating_point_v<C>)
      if (std::isnan(lo) || std::isnan(hi)) return std::numeric_limits<C>::quiet_NaN();
    return std::min(std::max(x, lo), hi);
  }
};

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_sizes("where", {&cond, &a, &b});
  check_same_dtype("where", {&a, &b});
  if (cond.dtype() != ScalarType::Bool)
    fail("where", "condition must be a bool tensor, got {}", dtype_name(cond.dtype()));
  return dispatch_dtype(a.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    Tensor out = empty_contiguous(sizes_of(a), a.dtype());
    loop3<T, bool, T, T>(out, cond, a, b, [](bool c, T x, T y) { return c ? x : y; });
    return out;
  });
}

Tensor clamp(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  check_same_sizes("clamp", {&x, &lo, &hi});
  check_same_dtype("clamp", {&x, &lo, &hi});
  return dispatch_dtype(x.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (is_bool_v<T>) {
      reject_dtype("clamp", x.dtype());
    } else {
      Tensor out = empty_contiguous(sizes_of(x), x.dtype());
      loop3<T, T, T, T>(out, x, lo, hi, [](T v, T l, T h) { return store<T>(Clamp{}(load(v), load(l), load(h))); });
      return out;
    }
  });
}

}  // namespace

Tensor ternary(ir::TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c) {
  switch (op) {
    case ir::TernaryOp::where: return where(a, b, c);
    case ir::TernaryOp::clamp: return clamp(a, b, c);
  }
  internal_fail("ternary: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
