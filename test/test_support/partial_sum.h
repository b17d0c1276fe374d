// kiln/test/test_support/partial_sum.h — the float sum of a row as kiln's CPU kernels compute
// it, written out in scalar C++ from the layout's definition (ir/kernel.h KVectorize::partials),
// so that tests can hold the kernels to it bit for bit on any host.
//
// A row is cut into blocks of 64 x kPartialRows values; position t of a block adds into partial
// t mod 64 (in float for f32, f16 and bf16 rows), in order; at the block's end the partials
// are widened to double and combine pairwise (lanes [0, 32) plus [32, 64), then halves again),
// and the block's total adds into a double accumulator. The caller rounds the accumulator to
// the result dtype. A row shorter than 64 gets fewer partials in the kernel (a power of two at
// or above its length), which sums to the same bits: the missing partials would only add zeros.
#pragma once

#include "ir/kernel.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace kiln::test {

// Partial is float (double gives the f64 accumulator's sum); x[i * stride] for i in [0, n) are the row's values, already in
// the dtype the kernel yields (an f16 row's values rounded to f16).
template <typename Partial, typename T> double partial_layout_sum(const T* x, int64_t n, int64_t stride = 1) {
  constexpr int64_t kLanes = 64;
  const int64_t block = kLanes * ir::kPartialRows;
  double acc = 0.0;
  for (int64_t base = 0; base < n; base += block) {
    std::array<Partial, kLanes> p{};
    const int64_t count = std::min(block, n - base);
    for (int64_t t = 0; t < count; ++t) p[static_cast<size_t>(t % kLanes)] += static_cast<Partial>(x[(base + t) * stride]);
    std::array<double, kLanes> d{};
    for (size_t l = 0; l < d.size(); ++l) d[l] = static_cast<double>(p[l]);
    for (int64_t w = kLanes / 2; w >= 1; w /= 2)
      for (int64_t l = 0; l < w; ++l) d[static_cast<size_t>(l)] += d[static_cast<size_t>(l + w)];
    acc += d[0];
  }
  return acc;
}

}  // namespace kiln::test
