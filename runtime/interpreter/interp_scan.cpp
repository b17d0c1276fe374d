// kiln/runtime/interpreter/interp_scan.cpp — the Scan family's reference kernels: cumsum, cumprod,
// cummax, cummin, logcumsumexp, along one dim in row-major order (scan_math.h holds the running
// combine shared with the cpu backend's library scan). Sums and products accumulate as the
// reductions do (interp_math.h SumAcc).
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"
#include "runtime/interpreter/scan_math.h"
#include "runtime/interpreter/strided_loop.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

// x is NaN (false for integers and bool).
template <typename T> bool scan_isnan(T x) {
  if constexpr (is_float_elem_v<T>) return std::isnan(static_cast<double>(static_cast<float>(x)));
  else return false;
}


}  // namespace

Tensor scan(ir::ScanOp op, const Tensor& a, const ir::AttrList& attrs) {
  ir::OpKind kind = ir::OpKind::cumsum;
  switch (op) {
    case ir::ScanOp::cumsum: kind = ir::OpKind::cumsum; break;
    case ir::ScanOp::cumprod: kind = ir::OpKind::cumprod; break;
    case ir::ScanOp::cummax: kind = ir::OpKind::cummax; break;
    case ir::ScanOp::cummin: kind = ir::OpKind::cummin; break;
    case ir::ScanOp::logcumsumexp: kind = ir::OpKind::logcumsumexp; break;
  }
  const int64_t dim_attr = attrs.get<int64_t>(kind, "dim");
  const auto& sizes = a.impl()->sizes();
  const auto& strides = a.impl()->strides();
  int64_t d = dim_attr;
  if (sizes.empty())
    d = 0;  // a 0-dim tensor scans its lone element
  else if (d < 0 || d >= static_cast<int64_t>(sizes.size()))
    internal_fail("scan dim {} out of range", d);
  return dispatch_dtype(a.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    Tensor out = empty_contiguous(sizes, a.dtype());
    T* po = static_cast<T*>(out.impl()->data());
    const T* in = static_cast<const T*>(a.impl()->data());
    std::vector<int64_t> out_strides = contiguous_strides(sizes);
    const size_t du = static_cast<size_t>(d);
    const int64_t extent = sizes.empty() ? 1 : sizes[du];
    const int64_t in_step = sizes.empty() ? 0 : strides[du], out_step = sizes.empty() ? 0 : out_strides[du];
    std::vector<int64_t> outer = sizes.vec();
    if (!outer.empty()) outer[du] = 1;
    // Sequential along the dim: each output is the running accumulator rounded once.
    for_each_element<2>(outer, {strides.data(), out_strides.data()}, [&](const std::array<int64_t, 2>& o) {
      auto x_at = [&](int64_t k) { return in[o[0] + k * in_step]; };
      T* y = po + o[1];
      switch (op) {
        case ir::ScanOp::cumsum:
        case ir::ScanOp::cumprod: {
          const bool is_sum = op == ir::ScanOp::cumsum;
          SumAcc<T> acc = is_sum ? SumAcc<T>{0} : SumAcc<T>{1};
          for (int64_t k = 0; k < extent; ++k) {
            SumAcc<T> x = to_sum_acc(x_at(k));
            if (is_sum)
              acc += x;
            else
              acc *= x;
            y[k * out_step] = from_sum_acc<T>(acc);
          }
          break;
        }
        case ir::ScanOp::cummax:
        case ir::ScanOp::cummin: {
          const bool is_max = op == ir::ScanOp::cummax;
          T acc = x_at(0);
          for (int64_t k = 0; k < extent; ++k) {
            const T x = x_at(k);
            // f16/bf16 compare as float, everything else as itself (int64 exactly).
            auto key = [](T v) {
              if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(v);
              else return v;
            };
            const bool beyond = is_max ? key(x) > key(acc) : key(x) < key(acc);
            if (!scan_isnan(acc) && (scan_isnan(x) || beyond)) acc = x;
            y[k * out_step] = acc;
          }
          break;
        }
        case ir::ScanOp::logcumsumexp: {
          double acc = -std::numeric_limits<double>::infinity();
          for (int64_t k = 0; k < extent; ++k) {
            acc = log_add_exp(acc, static_cast<double>(to_sum_acc(x_at(k))));
            y[k * out_step] = from_sum_acc<T>(static_cast<SumAcc<T>>(acc));
          }
          break;
        }
      }
    });
    return out;
  });
}

}  // namespace kiln::rt::interp
