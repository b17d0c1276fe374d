// kiln/frontend/random.h — a seedable counter-based generator (Philox4x32-10).
//
// A Generator is a (seed, offset) pair. Each random op takes the current pair and advances
// the offset by one; element i of that op draws from Philox(key = seed, counter = (i, offset)),
// so every backend reproduces the same stream from the same pair, in any order.
#pragma once

#include <array>
#include <cstdint>

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

}  // namespace kiln
