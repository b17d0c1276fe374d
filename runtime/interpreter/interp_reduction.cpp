// kiln/runtime/interpreter/interp_reduction.cpp — the Reduction family's reference kernels: sum,
// prod, amax, amin, any, all, argmax, argmin (scans: interp_scan.cpp).
//
// Inputs may have any strides (zero strides included); elements are read through them with
// for_each_element, in row-major order, so every reduction accumulates in one fixed order.
// Floating sums and products (f16, bf16, f32, f64) accumulate in double and round once to
// the output dtype: the reference is more accurate than any backend (PyTorch accumulates f32
// in float with cascade summation), and backends are compared with tolerances. Integer sums
// and products wrap around (computed in uint64, then truncated to the dtype). amax/amin
// propagate NaN; argmax/argmin return the first extreme, a NaN counting as both the maximum
// and the minimum (PyTorch returns the index of the first NaN).

#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"
#include "runtime/interpreter/strided_loop.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>

namespace kiln::rt::interp {

namespace {



// The type amax/amin/argmax/argmin compare in: float for f16/bf16, uint8 for bool (so that
// accumulator arrays never meet std::vector<bool>), else the element type itself.
template <typename T> using CmpType = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                                         std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;

template <typename C> bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(x);
  else
    return false;
}

// Whether x replaces `best` as the running extreme: NaN wins and then sticks; ties keep the
// earlier element.
template <bool IsMax, typename C> bool better(C x, C best) {
  if (is_nan(best)) return false;
  if (is_nan(x)) return true;
  return IsMax ? x > best : x < best;
}

template <typename T> bool truthy(T x) {
  if constexpr (is_float_elem_v<T>)
    return static_cast<double>(x) != 0.0;  // NaN counts as true
  else
    return x != T(0);
}

ir::OpKind kind_of(ir::ReductionOp op) {
  switch (op) {
    case ir::ReductionOp::sum: return ir::OpKind::sum;
    case ir::ReductionOp::prod: return ir::OpKind::prod;
    case ir::ReductionOp::amax: return ir::OpKind::amax;
    case ir::ReductionOp::amin: return ir::OpKind::amin;
    case ir::ReductionOp::any: return ir::OpKind::any;
    case ir::ReductionOp::all: return ir::OpKind::all;
    case ir::ReductionOp::argmax: return ir::OpKind::argmax;
    case ir::ReductionOp::argmin: return ir::OpKind::argmin;
  }
  internal_fail("bad ReductionOp {}", static_cast<int>(op));
}

// Where each input element lands: the output shape and, per input dim, the stride of that
// dim in the (contiguous) output, zero for a reduced dim.
struct ReduceGeometry {
  std::vector<int64_t> out_sizes;
  std::vector<int64_t> out_strides;  // indexed by input dim
};

ReduceGeometry reduce_geometry(IntArrayRef sizes, const std::vector<int64_t>& dims, bool keepdim) {
  const size_t rank = sizes.size();
  std::vector<bool> reduced(rank, false);
  if (rank > 0) {  // a 0-dim tensor has nothing to reduce: any dims name its lone element
    for (int64_t d : dims) {
      if (d < 0 || d >= static_cast<int64_t>(rank)) internal_fail("reduction dim {} out of range for rank {}", d, rank);
      reduced[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<int64_t> kept = sizes.vec();
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  ReduceGeometry g;
  g.out_strides = contiguous_strides(kept);
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) g.out_strides[d] = 0;
    if (!reduced[d] || keepdim) g.out_sizes.push_back(kept[d]);
  }
  return g;
}

// Folds every input element into acc[output offset] with step(acc, x), then writes
// finish(acc) into a fresh output of `out_dtype` (element type Out).
template <typename T, typename Out, typename Acc, typename Step, typename Finish>
Tensor reduce_into(const Tensor& a, const ReduceGeometry& g, Acc init, Step step, Finish finish) {
  Tensor out = empty_contiguous(g.out_sizes, scalar_type_of<Out>);
  const size_t n = static_cast<size_t>(out.numel());
  std::unique_ptr<Acc[]> acc(new Acc[n]);
  for (size_t i = 0; i < n; ++i) acc[i] = init;
  const T* in = static_cast<const T*>(a.impl()->data());
  for_each_element<2>(a.impl()->sizes(), {a.impl()->strides().data(), g.out_strides.data()},
                      [&](const std::array<int64_t, 2>& o) { step(acc[static_cast<size_t>(o[1])], in[o[0]]); });
  Out* po = static_cast<Out*>(out.impl()->data());
  for (size_t i = 0; i < n; ++i) po[i] = finish(acc[i]);
  return out;
}

void check_nonempty_dims(const char* name, const Tensor& a, const std::vector<int64_t>& dims) {
  const auto& sizes = a.impl()->sizes();
  if (sizes.empty()) return;
  for (int64_t d : dims)
    if (sizes[static_cast<size_t>(d)] == 0) fail(name, "Expected reduction dim {} to have non-zero size.", d);
}

template <typename T, bool IsMax> Tensor extreme(const Tensor& a, const ReduceGeometry& g) {
  using C = CmpType<T>;
  C init = IsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  if constexpr (std::is_floating_point_v<C>)
    init = IsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
  return reduce_into<T, T>(
      a, g, init,
      [](C& acc, T x) {
        if (better<IsMax>(static_cast<C>(x), acc)) acc = static_cast<C>(x);
      },
      [](C acc) { return static_cast<T>(acc); });
}

// argmax/argmin: the position of the first extreme along `dim`, or in the flattened tensor.
template <typename T, bool IsMax>
Tensor arg_extreme(const Tensor& a, std::optional<int64_t> dim, bool keepdim, const char* name) {
  using C = CmpType<T>;
  const auto& sizes = a.impl()->sizes();
  const auto& strides = a.impl()->strides();
  const T* in = static_cast<const T*>(a.impl()->data());
  if (!dim || sizes.empty()) {
    if (a.numel() == 0) fail(name, "Expected reduction dim to be specified for input.numel() == 0.");
    std::vector<int64_t> out_sizes = keepdim ? std::vector<int64_t>(sizes.size(), 1) : std::vector<int64_t>{};
    C best{};
    int64_t best_i = -1, i = 0;
    for_each_element<1>(sizes, {strides.data()}, [&](const std::array<int64_t, 1>& o) {
      C x = static_cast<C>(in[o[0]]);
      if (best_i < 0 || better<IsMax>(x, best)) {
        best = x;
        best_i = i;
      }
      ++i;
    });
    Tensor out = empty_contiguous(out_sizes, kLong);
    *static_cast<int64_t*>(out.impl()->data()) = best_i;
    return out;
  }
  const int64_t d = *dim;
  if (d < 0 || d >= static_cast<int64_t>(sizes.size())) internal_fail("{} dim {} out of range", name, d);
  const int64_t extent = sizes[static_cast<size_t>(d)];
  if (extent == 0) fail(name, "Expected reduction dim {} to have non-zero size.", d);
  ReduceGeometry g = reduce_geometry(sizes, {d}, keepdim);
  Tensor out = empty_contiguous(g.out_sizes, kLong);
  int64_t* po = static_cast<int64_t*>(out.impl()->data());
  std::vector<int64_t> outer = sizes.vec();
  outer[static_cast<size_t>(d)] = 1;
  const int64_t step = strides[static_cast<size_t>(d)];
  for_each_element<2>(outer, {strides.data(), g.out_strides.data()}, [&](const std::array<int64_t, 2>& o) {
    C best = static_cast<C>(in[o[0]]);
    int64_t best_k = 0;
    for (int64_t k = 1; k < extent; ++k) {
      C x = static_cast<C>(in[o[0] + k * step]);
      if (better<IsMax>(x, best)) {
        best = x;
        best_k = k;
      }
    }
    po[o[1]] = best_k;
  });
  return out;
}

}  // namespace

Tensor reduction(ir::ReductionOp op, const Tensor& a, const ir::AttrList& attrs) {
  const ir::OpKind kind = kind_of(op);
  return dispatch_dtype(a.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    auto dims = [&] { return attrs.get<std::vector<int64_t>>(kind, "dims"); };
    auto geometry = [&] { return reduce_geometry(a.impl()->sizes(), dims(), attrs.get<bool>(kind, "keepdim")); };
    switch (op) {
      case ir::ReductionOp::sum:
        return reduce_into<T, T>(
            a, geometry(), SumAcc<T>{0}, [](SumAcc<T>& acc, T x) { acc += to_sum_acc(x); },
            [](SumAcc<T> acc) { return from_sum_acc<T>(acc); });
      case ir::ReductionOp::prod:
        return reduce_into<T, T>(
            a, geometry(), SumAcc<T>{1}, [](SumAcc<T>& acc, T x) { acc *= to_sum_acc(x); },
            [](SumAcc<T> acc) { return from_sum_acc<T>(acc); });
      case ir::ReductionOp::amax: check_nonempty_dims("amax", a, dims()); return extreme<T, true>(a, geometry());
      case ir::ReductionOp::amin: check_nonempty_dims("amin", a, dims()); return extreme<T, false>(a, geometry());
      case ir::ReductionOp::any:
        return reduce_into<T, bool>(
            a, geometry(), uint8_t{0}, [](uint8_t& acc, T x) { acc = acc || truthy(x); },
            [](uint8_t acc) { return acc != 0; });
      case ir::ReductionOp::all:
        return reduce_into<T, bool>(
            a, geometry(), uint8_t{1}, [](uint8_t& acc, T x) { acc = acc && truthy(x); },
            [](uint8_t acc) { return acc != 0; });
      case ir::ReductionOp::argmax:
        return arg_extreme<T, true>(a, attrs.get_opt<int64_t>(kind, "dim"), attrs.get<bool>(kind, "keepdim"), "argmax");
      case ir::ReductionOp::argmin:
        return arg_extreme<T, false>(a, attrs.get_opt<int64_t>(kind, "dim"), attrs.get<bool>(kind, "keepdim"),
                                     "argmin");
    }
    internal_fail("bad ReductionOp {}", static_cast<int>(op));
  });
}

}  // namespace kiln::rt::interp
