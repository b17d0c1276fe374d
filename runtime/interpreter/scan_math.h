// kiln/runtime/interpreter/scan_math.h — the arithmetic of the scans that is not plain + or *, for the
// reference interpreter (runtime/interpreter/interp_scan.cpp). The generated scan kernels
// (passes/lower.cpp, build_scan) compute the same steps as kernel instructions, bit for bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::rt {

// log(exp(a) + exp(b)) in double: -inf is the empty sum, +inf absorbs, NaN propagates.
inline double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (lo == -std::numeric_limits<double>::infinity() || hi == std::numeric_limits<double>::infinity()) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace kiln::rt
