// kiln/runtime/interpreter/interp_random.cpp — the Random family's reference kernels: uniform and
// normal, the executable form of the draws specified in frontend/ops_random.h: element i
// (row-major) of a call with (seed, offset) comes from Philox4x32-10 at counter (i, offset) and
// key seed, so a backend reproduces them in any order. Outputs are CPU tensors: the interpreter
// runs on the CPU whatever the `device` attribute names.
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
