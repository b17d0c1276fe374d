// kiln/runtime/interpreter/interp_factory.cpp — the Factory family's reference kernels: iota and full.
//
// iota computes start + i * step in double for floating dtypes (PyTorch's arange computes in
// its accumulate type) and in wrapping int64 for integer dtypes, then converts to the dtype.
#include "base/error.h"
#include "frontend/ops_random.h"
#include "runtime/interpreter/interp_kernels.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

template <typename T> inline constexpr bool is_float_elem =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

using random_detail::round_to;

Tensor iota(int64_t length, const Scalar& start, const Scalar& step, ScalarType dtype) {
  if (length < 0) fail("iota", "length must be non-negative, got {}", length);
  Tensor out = empty_contiguous({length}, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(out.impl()->data());
    if constexpr (is_float_elem<T>) {
      const double s = start.to_double(), d = step.to_double();
      for (int64_t i = 0; i < length; ++i) p[i] = round_to<T>(s + static_cast<double>(i) * d);
    } else {
      const uint64_t s = static_cast<uint64_t>(start.to_int()), d = static_cast<uint64_t>(step.to_int());
      for (int64_t i = 0; i < length; ++i) {
        const uint64_t v = s + static_cast<uint64_t>(i) * d;  // wraps around
        if constexpr (std::is_same_v<T, bool>)
          p[i] = v != 0;
        else
          p[i] = static_cast<T>(v);
      }
    }
  });
  return out;
}

Tensor full(const std::vector<int64_t>& size, const Scalar& value, ScalarType dtype) {
  Tensor out = empty_contiguous(size, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    T* p = static_cast<T*>(out.impl()->data());
    for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = v;
  });
  return out;
}

}  // namespace

int64_t sym_int(const ir::AttrValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const ir::Expr* e = std::get_if<ir::Expr>(&v)) return e->as_const();
  internal_fail("expected a SymInt attribute, got {}", ir::attr_str(v));
}

std::vector<int64_t> sym_ints(const ir::AttrValue& v) {
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) return *l;
  if (const auto* l = std::get_if<std::vector<ir::Expr>>(&v)) return ir::to_ints(*l);
  internal_fail("expected a SymInt[] attribute, got {}", ir::attr_str(v));
}

Tensor factory(ir::FactoryOp op, const ir::AttrList& attrs) {
  switch (op) {
    case ir::FactoryOp::iota: {
      constexpr ir::OpKind k = ir::OpKind::iota;
      return iota(sym_int(attrs.at(k, "length")), attrs.get<Scalar>(k, "start"), attrs.get<Scalar>(k, "step"),
                  attrs.get<ScalarType>(k, "dtype"));
    }
    case ir::FactoryOp::full: {
      constexpr ir::OpKind k = ir::OpKind::full;
      return full(sym_ints(attrs.at(k, "size")), attrs.get<Scalar>(k, "value"), attrs.get<ScalarType>(k, "dtype"));
    }
  }
  internal_fail("bad FactoryOp {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
