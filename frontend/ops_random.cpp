// kiln/frontend/ops_random.cpp — Philox4x32-10 and the per-element draws every backend reproduces.
//
// The generator is counter based: element `index` of a random op called with (seed, offset)
// is a pure function of those three numbers, so any backend, in any iteration order and with
// any parallel split, produces bit-identical draws. The exact definitions (word layout, the
// bit-to-float mappings, Box-Muller) are spelled out in frontend/ops_random.h; this file is their
// executable form and the code generators emit the same arithmetic.

#include "frontend/ops_random.h"

#include <cmath>
#include <numbers>

namespace kiln {

namespace {

constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

constexpr double k2Pow53Inv = 1.0 / 9007199254740992.0;  // 2^-53
constexpr float k2Pow24Inv = 1.0f / 16777216.0f;         // 2^-24

inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

inline std::array<uint32_t, 4> draw(uint64_t seed, uint64_t offset, uint64_t index) {
  return philox4x32({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), static_cast<uint32_t>(offset),
                     static_cast<uint32_t>(offset >> 32)},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

// 53 random bits from two words (the first supplies the high half).
inline uint64_t bits53(uint32_t hi_word, uint32_t lo_word) {
  return ((static_cast<uint64_t>(hi_word) << 32) | static_cast<uint64_t>(lo_word)) >> 11;
}

}  // namespace

Generator& default_generator() {
  static Generator gen;  // initialized once, thread-safely (C++11 magic statics)
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {  // the key is bumped between rounds (Random123's philox4x32_R)
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kPhiloxM0, counter[0], hi0, lo0);
    mulhilo(kPhiloxM1, counter[2], hi1, lo1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
  }
  return counter;
}

float uniform_f32(uint64_t seed, uint64_t offset, uint64_t index) {
  std::array<uint32_t, 4> w = draw(seed, offset, index);
  return static_cast<float>(w[0] >> 8) * k2Pow24Inv;
}

double uniform_f64(uint64_t seed, uint64_t offset, uint64_t index) {
  std::array<uint32_t, 4> w = draw(seed, offset, index);
  return static_cast<double>(bits53(w[0], w[1])) * k2Pow53Inv;
}

double normal_f64(uint64_t seed, uint64_t offset, uint64_t index) {
  std::array<uint32_t, 4> w = draw(seed, offset, index);
  double u1 = static_cast<double>(bits53(w[0], w[1]) + 1) * k2Pow53Inv;  // (0, 1]: log(u1) is finite
  double u2 = static_cast<double>(bits53(w[2], w[3])) * k2Pow53Inv;      // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace kiln
