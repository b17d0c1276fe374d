// kiln/runtime/interpreter/strided_loop.h — row-major iteration over N strided operands.
//
// for_each_element(sizes, {strides_a, strides_b, ...}, fn) calls fn(offsets) once per element
// in row-major order, with offsets[k] the element offset (in elements, not bytes) of that
// element in operand k relative to its first element. Zero strides express broadcasting.
#pragma once

#include <array>
#include <cstddef>
#include "base/int_array_ref.h"

#include <cstdint>
#include <vector>

namespace kiln::rt {

template <size_t N, typename Fn>
void for_each_element(IntArrayRef sizes, const std::array<const int64_t*, N>& strides, Fn&& fn) {
  const size_t rank = sizes.size();
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, N> off{};
  if (rank == 0) {
    fn(off);
    return;
  }
  const int64_t inner = sizes[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  while (true) {
    std::array<int64_t, N> o = off;
    for (int64_t i = 0; i < inner; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += inner_stride[k];
    }
    // Advance the outer index (dims rank-2 .. 0) like an odometer.
    size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * sizes[d];
      idx[d] = 0;
    }
  }
}

}  // namespace kiln::rt
