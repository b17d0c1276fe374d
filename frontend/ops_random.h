// kiln/frontend/ops_random.h — a seedable counter-based generator (Philox4x32-10).
//
// A Generator is a (seed, offset) pair. Each random op takes the current pair and advances
// the offset by one; element i of that op draws from Philox(key = seed, counter = (i, offset)),
// so every backend reproduces the same stream from the same pair, in any order.
//
// The exact definitions every backend reproduces (lo32/hi32 are the low/high 32 bits):
//   w[0..3]    = philox4x32(counter = {lo32(i), hi32(i), lo32(offset), hi32(offset)},
//                           key = {lo32(seed), hi32(seed)})       (Random123 philox4x32_10)
//   uniform_f32 = float(w0 >> 8) * 2^-24                          in [0, 1)
//   uniform_f64 = double(((u64(w0) << 32) | w1) >> 11) * 2^-53    in [0, 1)
//   normal_f64  = sqrt(-2 ln u1) * cos(2 pi u2), computed in double, with
//                 u1 = double((((u64(w0) << 32) | w1) >> 11) + 1) * 2^-53   in (0, 1]
//                 u2 = double(((u64(w2) << 32) | w3) >> 11) * 2^-53         in [0, 1)
// The prims built on them (runtime/interpreter/interp_factory.cpp is the reference):
//   uniform(low, high): v = low + (high - low) * u computed in double, with u = uniform_f64
//     for f64 and uniform_f32 otherwise, then rounded to the dtype; a value that rounds to
//     >= high becomes the largest value of the dtype below high, so results lie in [low, high).
//   normal(mean, std): mean + std * normal_f64 computed in double, rounded to the dtype.
#pragma once

#include "base/half.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  // Returns the offset for one op and advances.
  uint64_t next_offset() { return offset_++; }
  // Returns the first of `n` consecutive offsets and advances past them (a compiled call's draws).
  uint64_t reserve_offsets(uint64_t n) {
    const uint64_t first = offset_;
    offset_ += n;
    return first;
  }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide default generator (used when none is passed).
Generator& default_generator();
void manual_seed(uint64_t seed);

// Philox4x32 with 10 rounds.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// The draws every backend must reproduce, for element `index` of a call with (seed, offset).
float uniform_f32(uint64_t seed, uint64_t offset, uint64_t index);   // [0, 1), 24 random bits
double uniform_f64(uint64_t seed, uint64_t offset, uint64_t index);  // [0, 1), 53 random bits
double normal_f64(uint64_t seed, uint64_t offset, uint64_t index);   // Box-Muller on two words

namespace random_detail {

// A double rounded to a floating element type (f16/bf16 through float).
template <typename T> T round_to(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return T(static_cast<float>(v));
}

// The next representable value of T below x (x finite or +inf).
template <typename T> T next_down(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::nextafter(x, -std::numeric_limits<T>::infinity());
  } else {  // f16 / bf16: sign-magnitude bit patterns
    uint16_t b = x.bits;
    if ((b & 0x7fffu) == 0) b = 0x8001u;  // +-0 -> the smallest negative subnormal
    else if (b & 0x8000u) b = static_cast<uint16_t>(b + 1);
    else b = static_cast<uint16_t>(b - 1);
    return T::from_bits(b);
  }
}

}  // namespace random_detail

// Element `index` of the uniform and normal prims of dtype T (f16, bf16, f32, f64), as
// specified above; every CPU path (the interpreter, the library kernel) computes these.
template <typename T> T uniform_element(double low, double high, uint64_t seed, uint64_t offset, uint64_t index) {
  const double u = std::is_same_v<T, double> ? uniform_f64(seed, offset, index)
                                             : static_cast<double>(uniform_f32(seed, offset, index));
  T r = random_detail::round_to<T>(low + (high - low) * u);
  if (high > low)
    while (static_cast<double>(r) >= high) r = random_detail::next_down(r);
  return r;
}
template <typename T> T normal_element(double mean, double std, uint64_t seed, uint64_t offset, uint64_t index) {
  return random_detail::round_to<T>(mean + std * normal_f64(seed, offset, index));
}

}  // namespace kiln
