// kiln/test/test_interp_binary.cpp — the interpreter's binary pointwise prims against known values.
//
// Expected values are written by hand: integer wrap-around worked out modulo 2^n, division and
// remainder for all four sign combinations, NaN and signed zeros, f16/bf16 ties. Exact results
// are compared exactly (sign of zero included, NaN matches NaN only).
#include "base/error.h"
#include "ir/attr.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace kiln;
using namespace kiln::test;
using ir::OpKind;

Tensor div(const Tensor& a, const Tensor& b, const char* mode) {
  ir::AttrValue m = mode ? ir::AttrValue(std::string(mode)) : ir::AttrValue(std::monostate{});
  return run(OpKind::div, {a, b}, {m});
}

std::vector<int64_t> longs(const Tensor& t) { return values<int64_t>(t); }

// ---- arithmetic ---------------------------------------------------------------------------

TEST(InterpBinary, AddFloats) {
  expect_exact(
      run(OpKind::add, {mk<float>({1.5, kInf, kInf, kNaN, -0.0, -0.0}), mk<float>({2.25, -kInf, 1, 1, 0.0, -0.0})}),
      kFloat, {3.75, kNaN, kInf, kNaN, 0.0, -0.0});
  expect_exact(run(OpKind::add, {mk<double>({0.1}), mk<double>({0.2})}), kDouble, {0.30000000000000004});
}

TEST(InterpBinary, AddHalfRoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to the even 1. 1 + 3*2^-11 is halfway
  // between 1 + 2^-10 and 1 + 2^-9: ties to the even 1 + 2^-9.
  expect_exact(run(OpKind::add, {mk<Half>({1, 1, 1}), mk<Half>({0.00048828125, 0.00146484375, 0.0009765625})}), kHalf,
               {1, 1.001953125, 1.0009765625});
  // f16 overflows at 65520 (halfway to the next binade): 65504 + 16 -> inf, 65504 + 8 -> 65504.
  expect_exact(run(OpKind::add, {mk<Half>({65504, 65504}), mk<Half>({16, 8})}), kHalf, {kInf, 65504});
  // bf16: 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties to 1 + 2^-6.
  expect_exact(run(OpKind::add, {mk<BFloat16>({1, 1}), mk<BFloat16>({0.00390625, 0.01171875})}), kBFloat16,
               {1, 1.015625});
}

TEST(InterpBinary, AddIntegersWrap) {
  expect_exact(run(OpKind::add, {mk<int8_t>({127, -128, 100}), mk<int8_t>({1, -1, 100})}), kInt8, {-128, 127, -56});
  expect_exact(run(OpKind::add, {mk<uint8_t>({255, 200}), mk<uint8_t>({1, 100})}), kUInt8, {0, 44});
  expect_exact(run(OpKind::add, {mk<int16_t>({32767}), mk<int16_t>({2})}), kInt16, {-32767});
  expect_exact(run(OpKind::add, {mk<int32_t>({INT32_MAX, INT32_MIN}), mk<int32_t>({1, -1})}), kInt32,
               {INT32_MIN, INT32_MAX});
  EXPECT_EQ(longs(run(OpKind::add, {make<int64_t>({INT64_MAX, INT64_MIN}), make<int64_t>({1, -1})})),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
}

TEST(InterpBinary, AddAndMulOnBoolAreOrAndAnd) {
  Tensor a = mk<bool>({1, 1, 0, 0}), b = mk<bool>({1, 0, 1, 0});
  expect_exact(run(OpKind::add, {a, b}), kBool, {1, 1, 1, 0});
  expect_exact(run(OpKind::mul, {a, b}), kBool, {1, 0, 0, 0});
}

TEST(InterpBinary, Sub) {
  expect_exact(run(OpKind::sub, {mk<float>({0.0, -0.0, 1, kInf}), mk<float>({0.0, 0.0, 3.5, kInf})}), kFloat,
               {0.0, -0.0, -2.5, kNaN});
  expect_exact(run(OpKind::sub, {mk<int8_t>({-128, 127}), mk<int8_t>({1, -1})}), kInt8, {127, -128});
  expect_exact(run(OpKind::sub, {mk<uint8_t>({0, 5}), mk<uint8_t>({1, 3})}), kUInt8, {255, 2});
  EXPECT_EQ(longs(run(OpKind::sub, {make<int64_t>({INT64_MIN}), make<int64_t>({1})})), std::vector<int64_t>{INT64_MAX});
  expect_exact(run(OpKind::sub, {mk<BFloat16>({3}), mk<BFloat16>({0.5})}), kBFloat16, {2.5});
  EXPECT_THROW(run(OpKind::sub, {mk<bool>({1}), mk<bool>({0})}), Error);
}

TEST(InterpBinary, Mul) {
  expect_exact(run(OpKind::mul, {mk<float>({0, -1, 1.5, kNaN}), mk<float>({kInf, 0, -4, 0})}), kFloat,
               {kNaN, -0.0, -6, kNaN});
  // 64*2 = 128 -> -128; -128*-1 = 128 -> -128; 16*16 = 256 -> 0.
  expect_exact(run(OpKind::mul, {mk<int8_t>({64, -128, 16}), mk<int8_t>({2, -1, 16})}), kInt8, {-128, -128, 0});
  expect_exact(run(OpKind::mul, {mk<int16_t>({300}), mk<int16_t>({300})}), kInt16, {24464});  // 90000 - 65536
  // 46341^2 = 2147488281 = 2^31 + 4633 -> -2147479015; 2^16 * 2^16 -> 0.
  expect_exact(run(OpKind::mul, {mk<int32_t>({46341, 65536}), mk<int32_t>({46341, 65536})}), kInt32, {-2147479015, 0});
  expect_exact(run(OpKind::mul, {mk<uint8_t>({16, 15}), mk<uint8_t>({16, 17})}), kUInt8, {0, 255});
  EXPECT_EQ(longs(run(OpKind::mul, {make<int64_t>({INT64_MAX, INT64_MIN}), make<int64_t>({2, -1})})),
            (std::vector<int64_t>{-2, INT64_MIN}));
}

// ---- division -----------------------------------------------------------------------------

TEST(InterpBinary, TrueDivision) {
  expect_exact(div(mk<float>({1, -1, 0, 1, -0.0}), mk<float>({0, 0, 0, 4, 5}), nullptr), kFloat,
               {kInf, -kInf, kNaN, 0.25, -0.0});
  expect_exact(div(mk<double>({1}), mk<double>({3}), nullptr), kDouble, {0.3333333333333333});
  // 1/3 = 0.33333334f in float, then f16 (grid 2^-12 in [0.25, 0.5)): 1365/4096.
  expect_exact(div(mk<Half>({1}), mk<Half>({3}), nullptr), kHalf, {0.333251953125});
  EXPECT_THROW(div(mk<int32_t>({1}), mk<int32_t>({2}), nullptr), Error);
}

TEST(InterpBinary, IntegerDivisionAllSignCombinations) {
  Tensor a = mk<int32_t>({7, -7, 7, -7, 6, -6, 0});
  Tensor b = mk<int32_t>({2, 2, -2, -2, 3, 3, -5});
  expect_exact(div(a, b, "trunc"), kInt32, {3, -3, -3, 3, 2, -2, 0});
  expect_exact(div(a, b, "floor"), kInt32, {3, -4, -4, 3, 2, -2, 0});
  Tensor a8 = mk<int8_t>({-7, -128, -128}), b8 = mk<int8_t>({2, -1, 1});
  expect_exact(div(a8, b8, "trunc"), kInt8, {-3, -128, -128});  // -128 / -1 wraps
  expect_exact(div(a8, b8, "floor"), kInt8, {-4, -128, -128});
  expect_exact(div(mk<uint8_t>({255, 7}), mk<uint8_t>({2, 9}), "floor"), kUInt8, {127, 0});
  Tensor a64 = make<int64_t>({INT64_MIN, -9, INT64_MAX});
  Tensor b64 = make<int64_t>({-1, 4, -2});
  EXPECT_EQ(longs(div(a64, b64, "trunc")), (std::vector<int64_t>{INT64_MIN, -2, -(INT64_MAX / 2)}));
  EXPECT_EQ(longs(div(a64, b64, "floor")), (std::vector<int64_t>{INT64_MIN, -3, -(INT64_MAX / 2) - 1}));
}

TEST(InterpBinary, FloatDivisionModes) {
  Tensor a = mk<float>({7, -7, 7, -7, 1, 0, -1, 1, 5});
  Tensor b = mk<float>({2, 2, -2, -2, -3, -3, kInf, kInf, 0.5});
  expect_exact(div(a, b, "trunc"), kFloat, {3, -3, -3, 3, -0.0, -0.0, -0.0, 0, 10});
  expect_exact(div(a, b, "floor"), kFloat, {3, -4, -4, 3, -1, -0.0, -1, 0, 10});
  // Division by zero gives the IEEE quotient in both modes.
  Tensor z = mk<double>({0, 0, 0});
  expect_exact(div(mk<double>({1, -1, 0}), z, "floor"), kDouble, {kInf, -kInf, kNaN});
  expect_exact(div(mk<double>({1, -1, 0}), z, "trunc"), kDouble, {kInf, -kInf, kNaN});
  expect_exact(div(mk<double>({kInf, kNaN}), mk<double>({2, 1}), "floor"), kDouble, {kNaN, kNaN});
  expect_exact(div(mk<Half>({7, -7}), mk<Half>({2, 2}), "floor"), kHalf, {3, -4});
  expect_exact(div(mk<BFloat16>({-7}), mk<BFloat16>({2}), "trunc"), kBFloat16, {-3});
}

TEST(InterpBinary, IntegerDivisionByZeroThrows) {
  EXPECT_EQ(error_of([] { div(mk<int32_t>({1, 2}), mk<int32_t>({1, 0}), "trunc"); }), "[div] ZeroDivisionError");
  EXPECT_EQ(error_of([] { div(mk<int64_t>({-1}), mk<int64_t>({0}), "floor"); }), "[div] ZeroDivisionError");
  EXPECT_EQ(error_of([] { div(mk<uint8_t>({0}), mk<uint8_t>({0}), "floor"); }), "[div] ZeroDivisionError");
  EXPECT_EQ(error_of([] {
              run(OpKind::remainder, {mk<int8_t>({5}), mk<int8_t>({0})});
            }),
            "[remainder] ZeroDivisionError");
  EXPECT_EQ(error_of([] { run(OpKind::fmod, {mk<int16_t>({5}), mk<int16_t>({0})}); }), "[fmod] ZeroDivisionError");
  EXPECT_THROW(div(mk<int32_t>({1}), mk<int32_t>({1}), "round"), Error);
}

TEST(InterpBinary, RemainderAndFmodAllSignCombinations) {
  Tensor a = mk<int32_t>({7, -7, 7, -7, 6, 0});
  Tensor b = mk<int32_t>({3, 3, -3, -3, -3, -3});
  expect_exact(run(OpKind::remainder, {a, b}), kInt32, {1, 2, -2, -1, 0, 0});  // sign of the divisor
  expect_exact(run(OpKind::fmod, {a, b}), kInt32, {1, -1, 1, -1, 0, 0});       // sign of the dividend
  expect_exact(run(OpKind::remainder, {mk<int8_t>({-128, -128}), mk<int8_t>({-1, 127})}), kInt8, {0, 126});
  expect_exact(run(OpKind::fmod, {mk<int8_t>({-128}), mk<int8_t>({-1})}), kInt8, {0});
  expect_exact(run(OpKind::remainder, {mk<uint8_t>({200}), mk<uint8_t>({7})}), kUInt8, {4});
  EXPECT_EQ(longs(run(OpKind::remainder, {make<int64_t>({INT64_MIN, -1}), make<int64_t>({-1, INT64_MAX})})),
            (std::vector<int64_t>{0, INT64_MAX - 1}));

  Tensor fa = mk<float>({7, -7, 7, -7, 5.5, -5.5});
  Tensor fb = mk<float>({3, 3, -3, -3, 2, 2});
  expect_exact(run(OpKind::remainder, {fa, fb}), kFloat, {1, 2, -2, -1, 1.5, 0.5});
  expect_exact(run(OpKind::fmod, {fa, fb}), kFloat, {1, -1, 1, -1, 1.5, -1.5});
  // By zero: NaN. By infinity: fmod keeps x; remainder adds the divisor when the signs differ.
  expect_exact(run(OpKind::remainder, {mk<double>({1, 5, -5, kInf}), mk<double>({0, kInf, kInf, 2})}), kDouble,
               {kNaN, 5, kInf, kNaN});
  expect_exact(run(OpKind::fmod, {mk<double>({1, 5, -5, -0.0}), mk<double>({0, kInf, kInf, 1})}), kDouble,
               {kNaN, 5, -5, -0.0});
  expect_exact(run(OpKind::remainder, {mk<Half>({-7}), mk<Half>({3})}), kHalf, {2});
}

TEST(InterpBinary, Pow) {
  expect_exact(run(OpKind::pow, {mk<float>({2, 0, kNaN, -8, 4, 0, -2}), mk<float>({10, 0, 0, 0.5, 0.5, -1, 3})}),
               kFloat, {1024, 1, 1, kNaN, 2, kInf, -8});
  expect_exact(run(OpKind::pow, {mk<double>({2}), mk<double>({-2})}), kDouble, {0.25});
  expect_exact(run(OpKind::pow, {mk<int32_t>({2, 3, -2, 0, 7}), mk<int32_t>({10, 0, 3, 0, 1})}), kInt32,
               {1024, 1, -8, 1, 7});
  // Negative exponents: 1 -> 1, -1 -> +-1 by parity, anything else (0 included) -> 0.
  expect_exact(run(OpKind::pow, {mk<int32_t>({1, -1, -1, 2, 0, -3}), mk<int32_t>({-3, -3, -2, -1, -1, -2})}), kInt32,
               {1, -1, 1, 0, 0, 0});
  // Wrap-around: 2^7 = 128 -> -128, 3^5 = 243 -> -13; uint8 2^8 -> 0.
  expect_exact(run(OpKind::pow, {mk<int8_t>({2, 3}), mk<int8_t>({7, 5})}), kInt8, {-128, -13});
  expect_exact(run(OpKind::pow, {mk<uint8_t>({2, 3}), mk<uint8_t>({8, 5})}), kUInt8, {0, 243});
  // 3^40 = 12157665459056928801 = 2^64 - 6289078614652622815.
  EXPECT_EQ(longs(run(OpKind::pow, {make<int64_t>({3, 2, -1}), make<int64_t>({40, 63, INT64_MIN})})),
            (std::vector<int64_t>{-6289078614652622815, INT64_MIN, 1}));
  expect_exact(run(OpKind::pow, {mk<Half>({2}), mk<Half>({-3})}), kHalf, {0.125});
}

TEST(InterpBinary, Atan2HypotCopysign) {
  const double pi = 3.141592653589793;
  Tensor y = mk<double>({1, 1, -1, 0, 0, -0.0});
  Tensor x = mk<double>({1, -1, -1, -0.0, 0, 1});
  std::vector<double> got = values<double>(run(OpKind::atan2, {y, x}));
  const std::vector<double> want = {pi / 4, 3 * pi / 4, -3 * pi / 4, pi, 0, -0.0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 4.5e-16 * std::fabs(want[i])) << i;
  EXPECT_TRUE(std::signbit(got[5]));
  expect_exact(run(OpKind::hypot, {mk<float>({3, kInf, kNaN, -5}), mk<float>({4, kNaN, 1, 12})}), kFloat,
               {5, kInf, kNaN, 13});
  expect_exact(run(OpKind::copysign, {mk<float>({1, 1, -2, 0, kInf}), mk<float>({-0.0, 0.0, 3, -1, -1})}), kFloat,
               {-1, 1, 2, -0.0, -kInf});
  expect_exact(run(OpKind::copysign, {mk<Half>({1.5}), mk<Half>({-0.0})}), kHalf, {-1.5});
  EXPECT_THROW(run(OpKind::atan2, {mk<int32_t>({1}), mk<int32_t>({1})}), Error);
}

// ---- min / max, comparisons, logic --------------------------------------------------------

TEST(InterpBinary, MaximumMinimumPropagateNaN) {
  Tensor a = mk<float>({1, kNaN, 2, -kInf, kNaN});
  Tensor b = mk<float>({kNaN, 1, 3, 5, kNaN});
  expect_exact(run(OpKind::maximum, {a, b}), kFloat, {kNaN, kNaN, 3, 5, kNaN});
  expect_exact(run(OpKind::minimum, {a, b}), kFloat, {kNaN, kNaN, 2, -kInf, kNaN});
  expect_exact(run(OpKind::fmax, {a, b}), kFloat, {1, 1, 3, 5, kNaN});
  expect_exact(run(OpKind::fmin, {a, b}), kFloat, {1, 1, 2, -kInf, kNaN});
  expect_exact(run(OpKind::maximum, {mk<Half>({kNaN, 1}), mk<Half>({0, 2})}), kHalf, {kNaN, 2});
  expect_exact(run(OpKind::fmin, {mk<BFloat16>({kNaN, 1}), mk<BFloat16>({0, 2})}), kBFloat16, {0, 1});
}

TEST(InterpBinary, MaximumMinimumIntegersAndBool) {
  expect_exact(run(OpKind::maximum, {mk<int8_t>({-128, 5}), mk<int8_t>({127, 3})}), kInt8, {127, 5});
  expect_exact(run(OpKind::minimum, {mk<int8_t>({-128, 5}), mk<int8_t>({127, 3})}), kInt8, {-128, 3});
  expect_exact(run(OpKind::maximum, {mk<uint8_t>({255, 0}), mk<uint8_t>({1, 0})}), kUInt8, {255, 0});
  expect_exact(run(OpKind::fmax, {mk<int32_t>({-4, 9}), mk<int32_t>({2, 1})}), kInt32, {2, 9});
  expect_exact(run(OpKind::fmin, {mk<int32_t>({-4, 9}), mk<int32_t>({2, 1})}), kInt32, {-4, 1});
  Tensor p = mk<bool>({1, 0, 0, 1}), q = mk<bool>({0, 0, 1, 1});
  expect_exact(run(OpKind::maximum, {p, q}), kBool, {1, 0, 1, 1});
  expect_exact(run(OpKind::minimum, {p, q}), kBool, {0, 0, 0, 1});
}

TEST(InterpBinary, ComparisonsWithNaN) {
  Tensor a = mk<float>({1, 2, kNaN, kNaN, -0.0, -kInf});
  Tensor b = mk<float>({2, 2, 1, kNaN, 0.0, kInf});
  expect_exact(run(OpKind::eq, {a, b}), kBool, {0, 1, 0, 0, 1, 0});
  expect_exact(run(OpKind::ne, {a, b}), kBool, {1, 0, 1, 1, 0, 1});
  expect_exact(run(OpKind::lt, {a, b}), kBool, {1, 0, 0, 0, 0, 1});
  expect_exact(run(OpKind::le, {a, b}), kBool, {1, 1, 0, 0, 1, 1});
  expect_exact(run(OpKind::gt, {a, b}), kBool, {0, 0, 0, 0, 0, 0});
  expect_exact(run(OpKind::ge, {a, b}), kBool, {0, 1, 0, 0, 1, 0});
}

TEST(InterpBinary, ComparisonsIntegersAndBool) {
  expect_exact(run(OpKind::lt, {mk<int8_t>({-1, 5}), mk<int8_t>({1, 5})}), kBool, {1, 0});
  expect_exact(run(OpKind::gt, {mk<uint8_t>({255, 0}), mk<uint8_t>({0, 255})}), kBool, {1, 0});  // unsigned order
  EXPECT_EQ(
      values<bool>(run(OpKind::le, {make<int64_t>({INT64_MIN, INT64_MAX}), make<int64_t>({INT64_MAX, INT64_MIN})})),
      (std::vector<bool>{true, false}));
  expect_exact(run(OpKind::lt, {mk<bool>({0, 1, 1}), mk<bool>({1, 1, 0})}), kBool, {1, 0, 0});
  expect_exact(run(OpKind::eq, {mk<Half>({0.1, 1}), mk<Half>({0.1, 2})}), kBool, {1, 0});
  // 2^24 + 1 is not a float, but it is an int32: compared as integers.
  expect_exact(run(OpKind::eq, {mk<int32_t>({16777217}), mk<int32_t>({16777216})}), kBool, {0});
}

TEST(InterpBinary, LogicalOpsTreatNonzeroAsTrue) {
  Tensor a = mk<float>({0, kNaN, 2, 0, -0.0});
  Tensor b = mk<float>({1, 1, 0, 0, 3});
  expect_exact(run(OpKind::logical_and, {a, b}), kBool, {0, 1, 0, 0, 0});
  expect_exact(run(OpKind::logical_or, {a, b}), kBool, {1, 1, 1, 0, 1});
  expect_exact(run(OpKind::logical_xor, {a, b}), kBool, {1, 0, 1, 0, 1});
  expect_exact(run(OpKind::logical_and, {mk<int32_t>({0, 5, -1}), mk<int32_t>({3, 7, 0})}), kBool, {0, 1, 0});
  expect_exact(run(OpKind::logical_xor, {mk<bool>({1, 1, 0}), mk<bool>({1, 0, 0})}), kBool, {0, 1, 0});
  expect_exact(run(OpKind::logical_or, {mk<uint8_t>({0, 0}), mk<uint8_t>({0, 128})}), kBool, {0, 1});
}

// ---- bits ---------------------------------------------------------------------------------

TEST(InterpBinary, BitwiseAndOrXor) {
  Tensor a = mk<int8_t>({-1, 0x0F}), b = mk<int8_t>({0x55, 0x3C});
  expect_exact(run(OpKind::bitwise_and, {a, b}), kInt8, {0x55, 0x0C});
  expect_exact(run(OpKind::bitwise_or, {a, b}), kInt8, {-1, 0x3F});
  expect_exact(run(OpKind::bitwise_xor, {a, b}), kInt8, {-86, 0x33});  // 0xAA
  Tensor u = mk<uint8_t>({0xF0}), v = mk<uint8_t>({0x3C});
  expect_exact(run(OpKind::bitwise_and, {u, v}), kUInt8, {0x30});
  expect_exact(run(OpKind::bitwise_or, {u, v}), kUInt8, {0xFC});
  expect_exact(run(OpKind::bitwise_xor, {u, v}), kUInt8, {0xCC});
  Tensor p = mk<bool>({1, 1, 0}), q = mk<bool>({1, 0, 0});
  expect_exact(run(OpKind::bitwise_and, {p, q}), kBool, {1, 0, 0});
  expect_exact(run(OpKind::bitwise_or, {p, q}), kBool, {1, 1, 0});
  expect_exact(run(OpKind::bitwise_xor, {p, q}), kBool, {0, 1, 0});
  EXPECT_EQ(longs(run(OpKind::bitwise_or, {make<int64_t>({INT64_MIN}), make<int64_t>({1})})),
            std::vector<int64_t>{INT64_MIN + 1});
  expect_exact(run(OpKind::bitwise_xor, {mk<int32_t>({-1}), mk<int32_t>({INT32_MIN})}), kInt32, {INT32_MAX});
  EXPECT_THROW(run(OpKind::bitwise_and, {mk<float>({1}), mk<float>({1})}), Error);
}

TEST(InterpBinary, LeftShift) {
  // Shifting by a negative amount or by the width or more gives 0.
  expect_exact(run(OpKind::bitwise_left_shift, {mk<int32_t>({1, 1, 1, 1, -3}), mk<int32_t>({0, 31, 32, -1, 2})}),
               kInt32, {1, INT32_MIN, 0, 0, -12});
  expect_exact(run(OpKind::bitwise_left_shift, {mk<int8_t>({64, 0x7F, 1}), mk<int8_t>({1, 1, 8})}), kInt8,
               {-128, -2, 0});
  expect_exact(run(OpKind::bitwise_left_shift, {mk<uint8_t>({0x81, 1}), mk<uint8_t>({1, 200})}), kUInt8, {0x02, 0});
  EXPECT_EQ(longs(run(OpKind::bitwise_left_shift, {make<int64_t>({1, 1, 3}), make<int64_t>({63, 64, 62})})),
            (std::vector<int64_t>{INT64_MIN, 0, INT64_MIN + (int64_t{1} << 62)}));
}

TEST(InterpBinary, RightShift) {
  // Signed: arithmetic; a negative shift or one by width-1 or more leaves only the sign.
  expect_exact(run(OpKind::bitwise_right_shift,
                   {mk<int32_t>({-8, -8, -8, 8, 8, -1, 8}), mk<int32_t>({1, 31, 40, 31, -1, 0, 3})}),
               kInt32, {-4, -1, -1, 0, 0, -1, 1});
  expect_exact(run(OpKind::bitwise_right_shift, {mk<int8_t>({-128, -128, 127}), mk<int8_t>({7, 3, 6})}), kInt8,
               {-1, -16, 1});
  // Unsigned: logical; by the width or more gives 0 (200 reads as a negative shift: 0 too).
  expect_exact(run(OpKind::bitwise_right_shift, {mk<uint8_t>({0x80, 0x80, 255}), mk<uint8_t>({7, 8, 200})}), kUInt8,
               {1, 0, 0});
  EXPECT_EQ(longs(run(OpKind::bitwise_right_shift,
                      {make<int64_t>({INT64_MIN, INT64_MIN, INT64_MAX}), make<int64_t>({63, 62, 64})})),
            (std::vector<int64_t>{-1, -2, 0}));
  EXPECT_THROW(run(OpKind::bitwise_right_shift, {mk<bool>({1}), mk<bool>({1})}), Error);
}

// ---- layouts and operand checks -----------------------------------------------------------

TEST(InterpBinary, StridedAndBroadcastOperands) {
  // a: 2x3 transpose of the 3x2 buffer [[1, 2], [3, 4], [5, 6]] -> [[1, 3, 5], [2, 4, 6]].
  Tensor base = mk<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor a = strided(base, {2, 3}, {1, 2});
  // row: [10, 20, 30] broadcast over rows (stride 0); col: [100, 200] broadcast over columns.
  Tensor row_buf = mk<float>({10, 20, 30});
  Tensor row = strided(row_buf, {2, 3}, {0, 1});
  Tensor col_buf = mk<float>({-1, 100, 200});
  Tensor col = strided(col_buf, {2, 3}, {1, 0}, 1);
  Tensor s = run(OpKind::add, {a, row});
  EXPECT_EQ(std::vector<int64_t>(s.sizes().begin(), s.sizes().end()), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(s.is_contiguous());
  expect_exact(s, kFloat, {11, 23, 35, 12, 24, 36});
  expect_exact(run(OpKind::sub, {col, row}), kFloat, {90, 80, 70, 190, 180, 170});
  expect_exact(run(OpKind::lt, {a, col}), kBool, {1, 1, 1, 1, 1, 1});
  // Rank 0 operands.
  expect_exact(run(OpKind::mul, {make<double>({3.0}, {}), make<double>({-2.0}, {})}), kDouble, {-6});
}

TEST(InterpBinary, RejectsMismatchedOperands) {
  EXPECT_THROW(run(OpKind::add, {mk<float>({1, 2}), mk<float>({1, 2, 3})}), Error);
  EXPECT_THROW(run(OpKind::add, {mk<float>({1}), mk<double>({1})}), Error);
}

}  // namespace
