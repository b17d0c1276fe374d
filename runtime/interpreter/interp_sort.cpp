// kiln/runtime/interpreter/interp_sort.cpp — the reference argsort.
//
// For every slice along `dim`, the positions 0..n-1 ordered by std::stable_sort on the
// slice's values: ascending or descending, NaN above every number (last ascending, first
// descending), equal elements (and NaNs among themselves) in their original order. f16/bf16
// compare as float, integers and bool as themselves. Written for clarity: the CPU backend's
// library call (runtime/cpu/extern_sort.cpp) is tested against it.
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/strided_loop.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

namespace kiln::rt::interp {

namespace {

template <typename T> auto comparable(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(x);
  else return x;
}

template <typename V> bool is_nan_value(V x) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(x);
  else return false;
}

}  // namespace

Tensor sort(ir::SortOp op, const Tensor& a, const ir::AttrList& attrs) {
  int64_t d = 0;
  bool descending = false;
  switch (op) {
    case ir::SortOp::argsort:
      d = attrs.get<int64_t>(ir::OpKind::argsort, "dim");
      descending = attrs.get<bool>(ir::OpKind::argsort, "descending");
      break;
    case ir::SortOp::sort:
    case ir::SortOp::topk: internal_fail("interp::sort: {} runs its decomposition", static_cast<int>(op));
  }
  const auto& sizes = a.impl()->sizes();
  const auto& strides = a.impl()->strides();
  Tensor out = empty_contiguous(sizes, ScalarType::Int64);
  int64_t* po = static_cast<int64_t*>(out.impl()->data());
  if (sizes.empty()) {  // a 0-dim tensor is one slice of one element
    po[0] = 0;
    return out;
  }
  if (d < 0 || d >= static_cast<int64_t>(sizes.size())) internal_fail("argsort dim {} out of range", d);
  const size_t du = static_cast<size_t>(d);
  const int64_t n = sizes[du];
  std::vector<int64_t> outer = sizes.vec();
  outer[du] = 1;
  const std::vector<int64_t> out_strides = contiguous_strides(sizes);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(a.impl()->data());
    std::vector<int64_t> order(static_cast<size_t>(n));
    for_each_element<2>(outer, {strides.data(), out_strides.data()}, [&](const std::array<int64_t, 2>& o) {
      auto value = [&](int64_t k) { return comparable(in[o[0] + k * strides[du]]); };
      // "x goes before y": ascending, NaN last; descending, NaN first.
      auto before = [&](int64_t i, int64_t j) {
        const auto x = value(i), y = value(j);
        if (is_nan_value(x) || is_nan_value(y)) return descending ? is_nan_value(x) && !is_nan_value(y)
                                                                  : !is_nan_value(x) && is_nan_value(y);
        return descending ? y < x : x < y;
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), before);
      for (int64_t k = 0; k < n; ++k) po[o[1] + k * out_strides[du]] = order[static_cast<size_t>(k)];
    });
    return 0;
  });
  return out;
}

}  // namespace kiln::rt::interp
