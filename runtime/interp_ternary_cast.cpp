// kiln/runtime/interp_ternary_cast.cpp — the interpreter's ternary prims, casts and copies.
//
// where(cond, a, b) selects per element; clamp(x, lo, hi) = min(max(x, lo), hi) with NaN
// propagating from x and from either bound (PyTorch's clamp with tensor bounds) and hi winning
// when lo > hi. convert_element_type, clone and copy_into all go through convert<To, From>()
// (runtime/interp_math.h), which defines every conversion, NaN and out-of-range included.
#include "base/error.h"
#include "runtime/interp_kernels.h"
#include "runtime/interp_math.h"

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

void copy_into(const Tensor& dst, const Tensor& src) {
  check_same_sizes("copy_", {&dst, &src});
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using To = decltype(dst_tag);
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using From = decltype(src_tag);
      loop1<To, From>(dst, src, [](From v) { return convert<To, From>(v); });
    });
  });
}

Tensor cast(ir::CastOp op, const Tensor& a, const ir::AttrList& attrs) {
  switch (op) {
    case ir::CastOp::convert_element_type: {
      const ScalarType dtype = attrs.get<ScalarType>(ir::OpKind::convert_element_type, "dtype");
      Tensor out = empty_contiguous(sizes_of(a), dtype);
      copy_into(out, a);
      return out;
    }
    case ir::CastOp::clone: {
      Tensor out = empty_contiguous(sizes_of(a), a.dtype());
      copy_into(out, a);
      return out;
    }
  }
  internal_fail("cast: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
