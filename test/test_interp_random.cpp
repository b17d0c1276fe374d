// kiln/test/test_interp_random.cpp — Philox4x32-10, the draw definitions of frontend/ops_random.h,
// the Generator, and the interpreter's random and factory prims (uniform, normal, iota, full).
//
// Philox is checked against Random123's known-answer vectors; the draws are checked bit for
// bit against their written definitions; the prims for reproducibility, range (including
// the guard that keeps rounded f16/bf16 values below `high`) and loose statistics.

#include "base/error.h"
#include "frontend/ops_random.h"
#include "ir/attr.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

namespace kiln {
namespace {

using namespace test;
using Words = std::array<uint32_t, 4>;

Tensor uniform(Ints size, double low, double high, int64_t seed, int64_t offset, ScalarType dtype) {
  return run(ir::OpKind::uniform, {}, {ir::to_exprs(size), low, high, seed, offset, dtype, Device()});
}

Tensor normal(Ints size, double mean, double std, int64_t seed, int64_t offset, ScalarType dtype) {
  return run(ir::OpKind::normal, {}, {ir::to_exprs(size), mean, std, seed, offset, dtype, Device()});
}

Tensor iota(int64_t length, Scalar start, Scalar step, ScalarType dtype) {
  return run(ir::OpKind::iota, {}, {ir::Expr(length), start, step, dtype, Device()});
}

Tensor full(Ints size, Scalar value, ScalarType dtype) {
  return run(ir::OpKind::full, {}, {ir::to_exprs(size), value, dtype, Device()});
}

template <typename T> std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out;
  for (T v : values<T>(t)) out.push_back(static_cast<double>(v));
  return out;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double std_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

uint64_t bits53(uint32_t hi, uint32_t lo) { return ((uint64_t{hi} << 32) | lo) >> 11; }

TEST(Philox, KnownAnswerVectors) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}), (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, DrawDefinitions) {
  // Counter {0,0,0,0}, key {0,0} is (seed 0, offset 0, index 0).
  EXPECT_EQ(uniform_f32(0, 0, 0), static_cast<float>(0x6627e8d5u >> 8) / 16777216.0f);
  EXPECT_EQ(uniform_f64(0, 0, 0), static_cast<double>(bits53(0x6627e8d5, 0xe169c58d)) / 9007199254740992.0);
  const double u1 = static_cast<double>(bits53(0x6627e8d5, 0xe169c58d) + 1) / 9007199254740992.0;
  const double u2 = static_cast<double>(bits53(0xbc57ac4c, 0x9b00dbd8)) / 9007199254740992.0;
  EXPECT_EQ(normal_f64(0, 0, 0), std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
  // The third vector pins the word layout: counter = {lo(i), hi(i), lo(offset), hi(offset)},
  // key = {lo(seed), hi(seed)}.
  const uint64_t index = 0x85a308d3243f6a88ull, offset = 0x0370734413198a2eull, seed = 0x299f31d0a4093822ull;
  EXPECT_EQ(uniform_f32(seed, offset, index), static_cast<float>(0xd16cfe09u >> 8) / 16777216.0f);
  EXPECT_EQ(uniform_f64(seed, offset, index), static_cast<double>(bits53(0xd16cfe09, 0x94fdcceb)) / 9007199254740992.0);
}

TEST(Philox, DrawRanges) {
  for (uint64_t i = 0; i < 20000; ++i) {
    float f = uniform_f32(7, 3, i);
    double d = uniform_f64(7, 3, i);
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
    ASSERT_TRUE(std::isfinite(normal_f64(7, 3, i)));
  }
}

TEST(Generator, SeedAndOffsets) {
  Generator g(5);
  EXPECT_EQ(g.seed(), 5u);
  EXPECT_EQ(g.next_offset(), 0u);
  EXPECT_EQ(g.next_offset(), 1u);
  EXPECT_EQ(g.offset(), 2u);
  g.manual_seed(9);
  EXPECT_EQ(g.seed(), 9u);
  EXPECT_EQ(g.offset(), 0u);
  Generator& d = default_generator();
  EXPECT_EQ(&d, &default_generator());
  d.next_offset();
  manual_seed(42);
  EXPECT_EQ(default_generator().seed(), 42u);
  EXPECT_EQ(default_generator().offset(), 0u);
}

TEST(InterpRandom, UniformMatchesDrawsAndReproduces) {
  Tensor a = uniform({2, 3}, 0.0, 1.0, 1234, 7, kFloat);
  EXPECT_EQ(a.sizes().vec(), (Ints{2, 3}));
  std::vector<float> av = values<float>(a);
  for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(av[i], uniform_f32(1234, 7, i));
  EXPECT_EQ(values<float>(uniform({2, 3}, 0.0, 1.0, 1234, 7, kFloat)), av);
  EXPECT_NE(values<float>(uniform({2, 3}, 0.0, 1.0, 1234, 8, kFloat)), av);
  EXPECT_NE(values<float>(uniform({2, 3}, 0.0, 1.0, 1235, 7, kFloat)), av);
  std::vector<double> dv = values<double>(uniform({4}, -2.0, 6.0, 99, 0, kDouble));
  for (size_t i = 0; i < dv.size(); ++i) EXPECT_EQ(dv[i], -2.0 + 8.0 * uniform_f64(99, 0, i));
}

TEST(InterpRandom, UniformRangeAndStatistics) {
  std::vector<double> v = as_doubles<float>(uniform({100000}, 2.0, 5.0, 1, 0, kFloat));
  for (double x : v) {
    ASSERT_GE(x, 2.0);
    ASSERT_LT(x, 5.0);
  }
  EXPECT_NEAR(mean_of(v), 3.5, 0.02);
  EXPECT_NEAR(std_of(v), 3.0 / std::sqrt(12.0), 0.02);
}

TEST(InterpRandom, RoundedValuesStayBelowHigh) {
  // An f32 draw within 2^-12 of 1 rounds to 1.0 in f16: it must become the largest f16 below 1.
  int64_t n = 100000;
  std::vector<Half> h = values<Half>(uniform({n}, 0.0, 1.0, 3, 0, kHalf));
  int guarded = 0;
  for (int64_t i = 0; i < n; ++i) {
    float x = static_cast<float>(h[static_cast<size_t>(i)]);
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    if (uniform_f32(3, 0, static_cast<uint64_t>(i)) >= 1.0f - 1.0f / 4096.0f) {
      EXPECT_EQ(x, 0.99951171875f);  // 1 - 2^-11
      ++guarded;
    }
  }
  EXPECT_GT(guarded, 0);
  std::vector<BFloat16> b = values<BFloat16>(uniform({n}, -1.0, 1.0, 4, 2, kBFloat16));
  for (BFloat16 x : b) {
    ASSERT_GE(static_cast<float>(x), -1.0f);
    ASSERT_LT(static_cast<float>(x), 1.0f);
  }
  // A high that the dtype cannot represent: values stay strictly below it.
  for (Half x : values<Half>(uniform({20000}, 0.0, 0.1, 5, 0, kHalf)))
    ASSERT_LT(static_cast<double>(static_cast<float>(x)), 0.1);
}

TEST(InterpRandom, NormalMatchesDrawsAndStatistics) {
  std::vector<double> d = values<double>(normal({5}, 1.5, 2.0, 77, 3, kDouble));
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i], 1.5 + 2.0 * normal_f64(77, 3, i));
  std::vector<float> f = values<float>(normal({5}, 0.0, 1.0, 77, 3, kFloat));
  for (size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(normal_f64(77, 3, i)));

  std::vector<double> s = values<double>(normal({100000}, 0.0, 1.0, 2024, 0, kDouble));
  EXPECT_NEAR(mean_of(s), 0.0, 0.02);
  EXPECT_NEAR(std_of(s), 1.0, 0.02);
  std::vector<double> t = as_doubles<float>(normal({100000}, 3.0, 2.0, 2025, 1, kFloat));
  EXPECT_NEAR(mean_of(t), 3.0, 0.04);
  EXPECT_NEAR(std_of(t), 2.0, 0.04);
  EXPECT_NE(values<double>(normal({4}, 0.0, 1.0, 2024, 1, kDouble)),
            values<double>(normal({4}, 0.0, 1.0, 2024, 0, kDouble)));
  Tensor h = normal({3, 2}, 0.0, 1.0, 1, 1, kHalf);
  EXPECT_EQ(h.sizes().vec(), (Ints{3, 2}));
  EXPECT_EQ(h.dtype(), kHalf);
  Tensor zero_std = normal({3}, 4.0, 0.0, 1, 1, kFloat);
  EXPECT_EQ(values<float>(zero_std), (std::vector<float>{4, 4, 4}));
  Tensor empty = normal({0, 4}, 0.0, 1.0, 1, 1, kFloat);
  EXPECT_EQ(empty.numel(), 0);
}

TEST(InterpFactory, Iota) {
  EXPECT_EQ(values<float>(iota(4, 1, 0.5, kFloat)), (std::vector<float>{1, 1.5, 2, 2.5}));
  EXPECT_EQ(values<int64_t>(iota(4, 10, -3, kLong)), (std::vector<int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(values<int8_t>(iota(3, 120, 5, kChar)), (std::vector<int8_t>{120, 125, -126}));  // wraps
  std::vector<double> d = values<double>(iota(3, 0.1, 0.1, kDouble));
  EXPECT_EQ(d[2], 0.1 + 2.0 * 0.1);  // start + i * step in double
  std::vector<Half> h = values<Half>(iota(4, 0.0, 0.1, kHalf));
  EXPECT_EQ(h[3].bits, Half(static_cast<float>(0.0 + 3.0 * 0.1)).bits);
  Tensor e = iota(0, 0, 1, kLong);
  EXPECT_EQ(e.sizes().vec(), (Ints{0}));
}

TEST(InterpFactory, Full) {
  Tensor a = full({2, 3}, 7, kInt);
  EXPECT_EQ(a.sizes().vec(), (Ints{2, 3}));
  EXPECT_EQ(values<int32_t>(a), (std::vector<int32_t>(6, 7)));
  EXPECT_EQ(values<Half>(full({2}, 0.1, kHalf))[1].bits, Half(0.1f).bits);
  EXPECT_EQ(values<bool>(full({3}, true, kBool)), (std::vector<bool>{true, true, true}));
  Tensor s = full({}, -2.5, kDouble);
  EXPECT_EQ(s.sizes().vec(), (Ints{}));
  EXPECT_EQ(values<double>(s), (std::vector<double>{-2.5}));
  EXPECT_EQ(full({0, 3}, 1, kFloat).numel(), 0);
}

}  // namespace
}  // namespace kiln
