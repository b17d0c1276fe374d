// kiln/runtime/interp_factory.cpp — reference factories (iota, full) and random prims
// (uniform, normal).
//
// iota computes start + i * step in double for floating dtypes (PyTorch's arange computes in
// its accumulate type) and in wrapping int64 for integer dtypes, then converts to the dtype.
// The random prims are the executable form of the draws specified in frontend/random.h:
// element i (row-major) of a call with (seed, offset) comes from Philox4x32-10 at counter
// (i, offset) and key seed, so a backend reproduces them in any order. Outputs are CPU
// tensors: the interpreter runs on the CPU whatever the `device` attribute names.

#include "base/error.h"
#include "frontend/random.h"
#include "runtime/interp_kernels.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

template <typename T> inline constexpr bool is_float_elem =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// SymInt attributes arrive as plain integers or as (constant) expressions.
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

// Fills a fresh tensor of `dtype` (floating) with gen(i) rounded to the dtype.
template <typename Gen>
Tensor fill_random(const char* name, const std::vector<int64_t>& size, ScalarType dtype, Gen&& gen) {
  if (!is_floating_point(dtype)) fail(name, "expected a floating point dtype, got {}", dtype_name(dtype));
  Tensor out = empty_contiguous(size, dtype);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_elem<T>) {
      T* p = static_cast<T*>(out.impl()->data());
      for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = gen(T{}, static_cast<uint64_t>(i));
    }
  });
  return out;
}

Tensor uniform(const std::vector<int64_t>& size, double low, double high, uint64_t seed, uint64_t offset,
               ScalarType dtype) {
  if (!(low <= high)) fail("uniform", "expects to return a [from, to) range, but found from={} > to={}", low, high);
  return fill_random("uniform", size, dtype, [&](auto tag, uint64_t i) {
    using T = decltype(tag);
    return uniform_element<T>(low, high, seed, offset, i);
  });
}

Tensor normal(const std::vector<int64_t>& size, double mean, double std, uint64_t seed, uint64_t offset,
              ScalarType dtype) {
  if (!(std >= 0.0)) fail("normal", "expects std >= 0.0, but found std {}", std);
  return fill_random("normal", size, dtype, [&](auto tag, uint64_t i) {
    using T = decltype(tag);
    return normal_element<T>(mean, std, seed, offset, i);
  });
}

}  // namespace

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

Tensor random(ir::RandomOp op, const ir::AttrList& attrs) {
  switch (op) {
    case ir::RandomOp::uniform: {
      constexpr ir::OpKind k = ir::OpKind::uniform;
      return uniform(sym_ints(attrs.at(k, "size")), attrs.get<double>(k, "low"), attrs.get<double>(k, "high"),
                     static_cast<uint64_t>(attrs.get<int64_t>(k, "seed")),
                     static_cast<uint64_t>(attrs.get<int64_t>(k, "offset")), attrs.get<ScalarType>(k, "dtype"));
    }
    case ir::RandomOp::normal: {
      constexpr ir::OpKind k = ir::OpKind::normal;
      return normal(sym_ints(attrs.at(k, "size")), attrs.get<double>(k, "mean"), attrs.get<double>(k, "std"),
                    static_cast<uint64_t>(attrs.get<int64_t>(k, "seed")),
                    static_cast<uint64_t>(attrs.get<int64_t>(k, "offset")), attrs.get<ScalarType>(k, "dtype"));
    }
  }
  internal_fail("bad RandomOp {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
