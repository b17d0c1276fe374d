// kiln/runtime/cpu/extern_scan.cpp — the scan prims as library calls: cumsum, cumprod, cummax,
// cummin and logcumsumexp, line by line along the dim, lines shared among the thread pool.
//
// The arithmetic is the reference interpreter's (runtime/interpreter/interp_scan.cpp), so results agree
// bit for bit: floating sums and products accumulate in double and round once per output
// (PyTorch's CPU scans accumulate float in double too), integers wrap around in uint64;
// cummax/cummin keep the first NaN once one appears; logcumsumexp is a running logaddexp in
// double.
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "runtime/cpu/extern_lines.h"
#include "runtime/interpreter/scan_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace kiln::rt {

namespace {

template <typename T> inline constexpr bool is_float_elem =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The accumulator of cumsum/cumprod: double for floating types, uint64 (wrapping) otherwise.
template <typename T> using Acc = std::conditional_t<is_float_elem<T>, double, uint64_t>;

template <typename T> Acc<T> widen(T x) {
  if constexpr (std::is_same_v<T, double>) return x;
  else if constexpr (is_float_elem<T>) return static_cast<double>(static_cast<float>(x));
  else return static_cast<uint64_t>(static_cast<int64_t>(x));
}

template <typename T> T narrow(Acc<T> a) {
  if constexpr (std::is_same_v<T, bool>) return a != 0;
  else if constexpr (std::is_same_v<T, double>) return a;
  else if constexpr (is_float_elem<T>) return T(static_cast<float>(a));
  else return static_cast<T>(a);
}

// How elements compare: f16/bf16 as float, the rest as themselves (int64 exactly).
template <typename T> auto key(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(x);
  else return x;
}

template <typename T> bool isnan_elem(T x) {
  if constexpr (is_float_elem<T>) return std::isnan(static_cast<double>(static_cast<float>(x)));
  else return false;
}


// One line: n elements x[k * xs] scanned into y[k * ys].
template <typename T> void scan_line(ir::ScanOp op, const T* x, int64_t xs, T* y, int64_t ys, int64_t n) {
  switch (op) {
    case ir::ScanOp::cumsum: {
      Acc<T> acc = 0;
      for (int64_t k = 0; k < n; ++k) y[k * ys] = narrow<T>(acc += widen(x[k * xs]));
      return;
    }
    case ir::ScanOp::cumprod: {
      Acc<T> acc = 1;
      for (int64_t k = 0; k < n; ++k) y[k * ys] = narrow<T>(acc *= widen(x[k * xs]));
      return;
    }
    case ir::ScanOp::cummax:
    case ir::ScanOp::cummin: {
      const bool is_max = op == ir::ScanOp::cummax;
      if (n == 0) return;
      T acc = x[0];
      for (int64_t k = 0; k < n; ++k) {
        const T v = x[k * xs];
        if (!isnan_elem(acc) && (isnan_elem(v) || (is_max ? key(v) > key(acc) : key(v) < key(acc)))) acc = v;
        y[k * ys] = acc;
      }
      return;
    }
    case ir::ScanOp::logcumsumexp: {
      if constexpr (is_float_elem<T>) {
        double acc = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < n; ++k) y[k * ys] = narrow<T>(acc = log_add_exp(acc, widen(x[k * xs])));
        return;
      }
      internal_fail("logcumsumexp of a non-floating dtype reached the scan kernel");
    }
  }
}

}  // namespace

void extern_scan(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const Tensor& a = ins.at(0);
  const ir::ScanOp scan = ir::as_scan(op);
  const Lines lines(a.sizes().vec(), attrs.get<int64_t>(op, "dim"));
  const std::vector<int64_t> in_strides = a.strides().vec(), out_strides = out.strides().vec();
  const int64_t xs = lines.step(in_strides), ys = lines.step(out_strides);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(a.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    lines.parallel([&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l)
        scan_line<T>(scan, in + lines.offset(l, in_strides), xs, po + lines.offset(l, out_strides), ys, lines.length());
    });
    return 0;
  });
}

}  // namespace kiln::rt
